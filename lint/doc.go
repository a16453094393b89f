// Package lint checks a Dockerfile before a multi-OS build, without a
// builder or a registry.
//
// Preflight parses a Dockerfile with BuildKit's own parser, resolves the
// stage graph per target platform the way BuildKit's Dockerfile frontend
// does (global ARGs and build args, FROM other-stage chains, FROM
// --platform, COPY --from and RUN --mount=from), and reports Findings with
// the Dockerfile's file:line; the rules are listed in docs/commands.md
// ("lint rules"). imgctl build runs Preflight for every variant before it
// contacts a daemon, and imgctl lint runs it alone. FinalBases uses the
// same graph to name the image the final stage is built FROM, per platform.
//
// The package reads nothing but the Dockerfile it is given and what the
// caller's Options.Resolve returns: it imports neither package build, nor
// the BuildKit client, nor any registry or network code
// (internal/testing/depcheck pins this). imgctl lint --resolve reads bases through its registry client.
package lint
