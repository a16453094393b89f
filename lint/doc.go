// Package lint checks a Dockerfile before a multi-OS build, without a
// builder or a registry.
//
// # Preflight
//
// Preflight parses a Dockerfile with BuildKit's own parser and resolves the
// stage graph per target platform the way BuildKit's Dockerfile frontend
// does (global ARGs and build args, FROM other-stage chains, FROM
// --platform, COPY --from and RUN --mount=from). It reports, as Findings:
//
//   - run-in-windows-stage: a RUN in a stage that the target needs and that
//     runs on Windows; a Linux builder cannot run a Windows process;
//   - invalid-exec-form: an ENTRYPOINT, CMD, SHELL or RUN that looks like
//     exec form but is not a valid JSON string array (ENTRYPOINT
//     ["C:\app\hello.exe"]), which BuildKit would silently run through a
//     shell;
//   - shell-form-entrypoint: a shell-form ENTRYPOINT or CMD in a Windows
//     stage.
//
// imgctl build runs Preflight for every variant before it contacts the
// daemon, and imgctl lint runs it alone. FinalBases uses the same graph to
// name the image the final stage is built FROM, per platform.
//
// The package reads nothing but the Dockerfile it is given: it imports
// neither package build, nor the BuildKit client, nor any registry or
// network code (TestDeps pins this).
package lint
