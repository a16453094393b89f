// Package rebase moves every variant of a published index onto the current
// image of its base, without a rebuild and without reading a layer: the
// monthly job after Patch Tuesday, when nanoserver and servercore get a new
// revision of the same build and Linux bases move too.
//
// Check reports each variant's base (from the base.name and base.digest
// annotations, or Options.Bases) and whether it is stale; Rebase swaps the
// old base's layers, diff_ids and history for the new base's, writes a
// provenance attestation per moved variant and publishes a new index with
// index.PublishPrepared, mounting every layer and uploading only the new
// configs. A Windows variant never moves to another build unless
// Options.AllowBuildChange is set. The package never prints: progress goes
// to Options.Logger and what it changed is returned in Result.Notes.
// docs/rebase.md has the rules and the provenance's layout.
package rebase
