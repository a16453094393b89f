// Package workflows checks imgctl's GitHub Actions files with actionlint
// (github.com/rhysd/actionlint, through its Go API): the workflows under
// .github/workflows, the example workflows, and the composite action in the
// repository's action.yml, whose steps actionlint lints as the job of a
// reusable workflow. Its tests also run the action's scripts
// (scripts/action) against a local release server.
//
// It is a module of its own, as internal/tools/distribution is: actionlint
// v1.7.12 is built against go.yaml.in/yaml/v4 v4.0.0-rc.3 and does not
// compile with the rc.4 that imgctl's go.mod gets from buildx, so it must
// not share imgctl's module graph. `make test` runs its tests, and
// `make actionlint` runs the actionlint command of the same version.
package workflows
