// Package bake reads buildx bake definitions (HCL, JSON, compose) with
// buildx's own bake package, so that variables, functions, inherits,
// matrix, groups and --set overrides mean what they mean in docker buildx
// bake, and turns each target into what imgctl build builds: one index
// per target, its Linux platforms in one solve and one Windows variant per
// LTSC release named among its platforms (windows(10.0.20348)/amd64,
// windows/amd64:10.0.26100 or ltsc2022).
//
// Read evaluates the files (Definition, which prints as docker buildx
// bake --print does); Definition.Plan checks every target and returns
// them as Targets whose Options are build.Options; CheckTags reads every
// tag before anything is built; Build runs the targets concurrently, a
// failed target leaving the others to finish, and spreads whole targets
// over a pool of nodes (several nodes of one platform). Errors wrap the sentinels
// below and name the file (and line, where one is known); they name no
// command-line flag.
package bake
