// Package spdxos adds a Windows image's operating system and its base
// image to the SPDX SBOM statement BuildKit attached to it, as an SPDX
// 2.3 package whose primaryPackagePurpose is OPERATING-SYSTEM (product,
// version 10.0.BUILD.REV, CPE) and a CONTAINER package for the base by
// digest (a pkg:oci package URL) that the image is DESCENDANT_OF. What it
// records comes from the image's config and the base reference, never
// from the base's files. It does no I/O: the caller reads the statement
// and publishes the result, and every byte of the statement it does not
// add to stays as it was (see AddWindows).
package spdxos
