// Package patchlevel reports how far each Windows variant of an image is
// behind its base's newest revision, in revisions and in Patch Tuesdays,
// how long a fix has been available, and where its release stands in
// Microsoft's support lifecycle on a given date.
//
// A Windows image is exactly as patched as its base revision: the
// os.version revision is the base's monthly cumulative update. The
// package lists the base repository's tags once (MCR publishes
// 10.0.BUILD.REV tags beside the moving ltsc20xx ones), and reads the
// config of the variant's own revision and of each newer one for its
// created date, through registry.Client. Dates and lifecycles are
// platform's arithmetic; this package only reads and assembles.
package patchlevel
