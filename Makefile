# imgctl — see README.md. Every target works on a fresh Linux machine as root
# once `make deps` has installed runc and busybox-static.
GO       ?= go
BIN      := bin
PKGS     := ./...

.PHONY: all build buildkitd registry cosign buildx-cli deps test test-short test-modules lint fmt-check vet fmt bench demo demo-lifecycle clean actionlint release release-dry-run syft-scanner sbom-measure

all: build

build:
	$(GO) build -o $(BIN)/imgctl ./cmd/imgctl

# The tools are compiled with vet's and the release's flags (TOOL_BUILD:
# CGO_ENABLED=0, -trimpath), so that the packages they share with imgctl
# (BuildKit, gRPC, containerd, the standard library) are compiled once on
# a cold cache, not once per flag set. For the same reason the tools
# modules compile imgctl's version of every module they share with it
# (internal/testing/versions checks it): at their own pins, a cold run
# compiled about 900 packages twice. None of them needs cgo:
# BuildKit, buildx, cosign and distribution ship static binaries. -s -w
# leaves the symbol tables out, which only debuggers read.
TOOL_BUILD = CGO_ENABLED=0 $(GO) $(1) build -trimpath
TOOL_LDFLAGS := -s -w

# buildkitd comes from the version go.mod pins, through its tool directive.
buildkitd: $(BIN)/buildkitd
$(BIN)/buildkitd: go.mod go.sum
	$(call TOOL_BUILD) -ldflags "$(TOOL_LDFLAGS)" -o $(BIN)/buildkitd github.com/moby/buildkit/cmd/buildkitd

# The CNCF distribution registry the tests run against (internal/testing/disttest),
# from the version pinned by its own tools module, so that its dependencies
# never move imgctl's go.mod.
DIST_MOD := internal/tools/distribution
registry: $(BIN)/registry
$(BIN)/registry: $(DIST_MOD)/go.mod $(DIST_MOD)/go.sum $(DIST_MOD)/registry/main.go
	$(call TOOL_BUILD,-C $(DIST_MOD)) -ldflags "$(TOOL_LDFLAGS)" -o $(CURDIR)/$(BIN)/registry ./registry

# The cosign CLIs the tests verify imgctl's signatures with (internal/testing/signtest),
# v2 and v3 from the versions pinned by their own tools module.
COSIGN_MOD := internal/tools/cosign
COSIGN_LDFLAGS = -X sigs.k8s.io/release-utils/version.gitVersion=$$(sed -n 's,^\tgithub.com/sigstore/cosign/$(1) ,,p' $(COSIGN_MOD)/go.mod)
cosign: $(BIN)/cosign-v2 $(BIN)/cosign-v3
$(BIN)/cosign-%: $(COSIGN_MOD)/go.mod $(COSIGN_MOD)/go.sum
	$(call TOOL_BUILD,-C $(COSIGN_MOD)) -ldflags "$(TOOL_LDFLAGS) $(call COSIGN_LDFLAGS,$*)" -o $(CURDIR)/$(BIN)/cosign-$* github.com/sigstore/cosign/$*/cmd/cosign

# The buildx CLI the tests run `buildx create` and `buildx use` with
# (internal/testing/buildtest.BuildxCLI), from its own tools module.
BUILDX_MOD := internal/tools/buildx
buildx-cli: $(BIN)/buildx
$(BIN)/buildx: $(BUILDX_MOD)/go.mod $(BUILDX_MOD)/go.sum
	$(call TOOL_BUILD,-C $(BUILDX_MOD)) -ldflags "$(TOOL_LDFLAGS)" -o $(CURDIR)/$(BIN)/buildx github.com/docker/buildx/cmd/buildx

# BuildKit's default SBOM scanner (docker/buildkit-syft-scanner v1.12.0,
# Syft as a library) rebuilt from its own tools module, for the measurement
# of what it finds in a Windows base (docs/sbom-windows.md). Not part of
# make test: Syft's tree is large to compile on a cold cache.
SYFT_MOD := internal/tools/syftscanner
syft-scanner: $(BIN)/syft-scanner
$(BIN)/syft-scanner: $(SYFT_MOD)/go.mod $(SYFT_MOD)/go.sum $(SYFT_MOD)/main.go
	$(call TOOL_BUILD,-C $(SYFT_MOD)) -ldflags "$(TOOL_LDFLAGS)" -o $(CURDIR)/$(BIN)/syft-scanner .

sbom-measure: deps buildkitd syft-scanner
	$(GO) test ./build -run TestSBOMScannerMeasurement -count=1 -v

# System packages the BuildKit tests need: runc for the OCI worker and a
# static busybox for the synthesised golang build image.
deps:
	@if ! command -v runc >/dev/null 2>&1 || ! test -x /bin/busybox; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y runc busybox-static; fi

# The test command of the README and CI.
# go vet compiles every dependency for its export data; with the release's
# flags (CGO_ENABLED=0, -trimpath) those compiles are the ones `make release`
# and the dry run need for linux/amd64, so they are done once.
VET := CGO_ENABLED=0 $(GO) vet -trimpath
# -race runs where imgctl's concurrency lives: the concurrent library
# packages (the registry client's transfers, index and rebase's workers,
# the build's concurrent solves, base reads and pre-mounts), each with its own
# concurrent tests (build's TestExportAttrsConcurrent holds the race -race
# found last). Their race-instrumented graph is a third of the module's.
# The CLI, the harnesses, sign and policy run without it, with vet's own
# flags, so that they reuse vet's compiles instead of instrumenting every
# dependency again: measured on a cold cache, go test -race compiles for
# 642 s where the plain test compile after vet takes 180 s (docs/measurements.md).
# sign and policy link cosign's and sigstore's graph, which only they need:
# -race on policy instrumented 268 more packages (1025, against 757). The
# one concurrency they hold is sign.Verify's errgroup, whose goroutines
# share the registry client (under -race in registry, index and rebase)
# and the keys, which they only read.
# Both sets run at once; the -race set runs its tests one package at a time
# (-p 1), so that at most three test binaries share the machine's two
# cores. -p 1 limits the compiles too, so the -race graph (RACE_DEPS,
# everything its test binaries import) is first compiled by go build at
# full parallelism: compiled one package at a time, it was the tail of a
# cold run, after every other set had ended.
RACE_PKGS = $(filter-out %/build/buildx,$(shell $(GO) list ./platform/... ./snapshot/... ./findings/... ./lint/... ./verify/... \
	./registry/... ./index/... ./rebase/... ./kube/... ./build/... ./internal/rawmanifest/...))
RACE_DEPS = $(shell $(GO) list -deps -test -f '{{if and (not .ForTest) (ne .Name "main")}}{{.ImportPath}}{{end}}' $(RACE_PKGS))
PLAIN_PKGS = $(filter-out $(RACE_PKGS),$(shell $(GO) list $(PKGS)))
# Test binaries are linked without DWARF (-w): nothing reads it, and it is
# a large part of linking binaries of BuildKit's and cosign's size; stack
# traces come from the symbol table, which stays.
# go test's own vet is off (-vet=off) wherever the recipe has just run go
# vet, every analyzer, over the same packages and their tests: go test's
# vet, a subset of those analyzers, vets every dependency again for its
# facts under each set's flags (-race and -tags make them differ).
# Measured on a cold cache, that was 121 CPU-seconds of vet beside go
# vet's own 89, and found nothing go vet had not (docs/measurements.md).
TEST_FLAGS := -count=1 -timeout 20m -ldflags=-w -vet=off
# The two modules of their own (examples/hello, internal/testing/workflows) are
# vetted and tested beside the main sets, their output printed when they
# end: on a cold cache their compiles (actionlint's module) fill the CPU
# the BuildKit tests leave idle while they wait on daemons. They are vetted
# and tested with vet's flags (hello's -race test with the -race set's),
# so that the standard library is compiled for them by no other flag set.
# hello's -race test runs in the -race job, once that job has compiled the
# -race standard library: started beside it, it compiled the same 170
# packages at the same time (the go command shares finished compiles, not
# running ones), about 60 CPU-seconds twice on a cold cache.
# build/buildx built with -tags nokubernetes (the kubernetes driver left
# out) is vetted and tested after them, in the same background job: run
# last, after every set, it was the run's tail with a core idle.
MODULES_LOG := .cache/test-modules.log
HELLO_VET = cd examples/hello && $(VET) ./...
HELLO_TEST = cd examples/hello && $(GO) test -race -vet=off -count=1 ./...
WORKFLOWS_TEST = cd internal/testing/workflows && $(VET) ./... && CGO_ENABLED=0 $(GO) test -trimpath -vet=off -count=1 ./...
TEST_MODULES = ($(HELLO_VET)) && ($(HELLO_TEST)) && ($(WORKFLOWS_TEST))
TEST_NOKUBERNETES = $(VET) -tags nokubernetes ./build/buildx/ && \
	CGO_ENABLED=0 $(GO) test -trimpath $(TEST_FLAGS) -tags nokubernetes ./build/buildx/
test: deps buildkitd registry cosign buildx-cli
	$(VET) $(PKGS)
	@mkdir -p .cache; ( ($(HELLO_VET)) && ($(WORKFLOWS_TEST)) && $(TEST_NOKUBERNETES) ) >$(MODULES_LOG) 2>&1 & modules=$$!; \
	{ $(GO) build -race $(RACE_DEPS) && ($(HELLO_TEST)) && $(GO) test -race -p 1 $(TEST_FLAGS) $(RACE_PKGS); } & race=$$!; \
	CGO_ENABLED=0 $(GO) test -trimpath $(TEST_FLAGS) $(PLAIN_PKGS); plain=$$?; \
	wait $$race; race=$$?; wait $$modules; modules=$$?; cat $(MODULES_LOG); \
	test $$race = 0 && test $$plain = 0 && test $$modules = 0

# The fast loop: `go test -short ./...`, which needs Go alone (no root, no
# daemon, nothing in bin/). Tests that need a buildkitd, the distribution
# registry, a CLI of bin/ or busybox-static skip under -short, naming
# `make test` (buildtest.SkipShort); the in-process registry's run. `make
# test` never passes -short, and without it a missing tool fails its test.
test-short:
	$(GO) test -short $(PKGS)

# The modules of their own that make test checks: examples/hello (with
# -race) and internal/testing/workflows (actionlint, the action's scripts).
test-modules:
	$(TEST_MODULES)

# actionlint (the version internal/testing/workflows pins, its own module) on the
# workflows; internal/testing/workflows' tests also lint action.yml and run its scripts.
actionlint:
	$(GO) -C internal/testing/workflows tool actionlint

lint: fmt-check vet

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(VET) $(PKGS)

fmt:
	gofmt -w .

bench: buildkitd registry
	$(GO) run ./internal/tools/bench

demo: deps buildkitd build
	$(GO) run ./internal/tools/demo

# The life of one image: build, sign, promote, Patch Tuesday, bases,
# rebase, verify --nodes, sign and promote again (docs/lifecycle.md).
demo-lifecycle: deps buildkitd
	$(GO) run ./internal/tools/demo/lifecycle

clean:
	rm -rf $(BIN) dist

# Releases are made by imgctl itself (internal/tools/release, run by
# internal/tools/release/cmd/release; the dry run by internal/tools/release/cmd/dryrun): imgctl cross-compiled for linux/amd64,
# linux/arm64, windows/amd64 and darwin/arm64 with VERSION stamped in,
# dist/imgctl_<version>_<os>_<arch>.tar.gz (.zip for Windows),
# dist/checksums.txt, imgctl's own image (release/Dockerfile) built with
# imgctl build, verified, signed, and dist/RELEASE_NOTES.md.
# `make release` needs IMAGE_REPOSITORY, BUILDKIT_HOST, COSIGN_KEY and
# COSIGN_PASSWORD (see .github/workflows/release.yml); the dry run needs
# none of them: an in-process registry, synthetic bases, bin/buildkitd and
# a throw-away key.
VERSION ?= $(shell git describe --tags --always --dirty)
# The release command itself is compiled with the release's flags too, so
# that it reuses the linux/amd64 compiles (see VET).
RELEASE_RUN := CGO_ENABLED=0 $(GO) run -trimpath ./internal/tools/release/cmd/release
release:
	$(RELEASE_RUN) -version $(VERSION)

# RELEASE_TARGETS limits the binaries the dry run compiles (CI builds
# linux/amd64 and windows/amd64; the image gets the Linux ones); empty
# means all.
RELEASE_TARGETS ?=
release-dry-run: deps buildkitd
	CGO_ENABLED=0 $(GO) run -trimpath ./internal/tools/release/cmd/dryrun -version $(VERSION) $(if $(RELEASE_TARGETS),-targets $(RELEASE_TARGETS))

# Fuzz every target for FUZZTIME each, on one worker (the seed corpora under
# testdata/fuzz run with every `go test`).
FUZZTIME ?= 30s
FUZZ_TARGETS := ./platform:FuzzParse ./platform:FuzzParseVersion ./platform:FuzzSelect \
	./lint:FuzzPreflight ./verify:FuzzEvaluate

.PHONY: fuzz reliability
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel 1 $$pkg || exit 1; \
	done

# Fault, bad-input, security and load tests plus fuzzing; writes RELIABILITY.md.
# The build fault cases run a real buildkitd.
reliability: deps buildkitd
	$(GO) run ./internal/tools/reliability -fuzztime $(FUZZTIME) -o RELIABILITY.md
