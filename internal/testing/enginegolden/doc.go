// Package enginegolden makes the golden tables imgctl's engine profiles are
// judged against: it runs each containerd release's own images.Manifest and
// github.com/containerd/platforms code (internal/tools/containerd, one
// module file per release) on a fixed set of Windows hosts and indexes, and
// records which entry each release runs. platform's tests read the table;
// this package's test regenerates it and fails when it differs from the
// checked-in copy.
package enginegolden
