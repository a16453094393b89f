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
//     stage;
//   - windows-base-release: a Windows stage, built FROM an image, whose
//     base cannot give the Windows release being built (a Windows target
//     platform with an os.version, one per imgctl build --windows release).
//     It flags a FROM that does not use ${WINDOWS_BASE} (WindowsBaseArg;
//     any other variable does not count) while Options.WindowsReleases is
//     more than one, reported once without a platform; a FROM whose tag
//     names another build, as platform.TagBuild reads Microsoft's tags
//     (ltsc2019 or 1809, ltsc2022, ltsc2025, 20H2, 23H2,
//     windowsservercore-ltsc2025, 8.0-nanoserver-ltsc2022, 10.0.BUILD[.REV]);
//     and, with Options.Resolve, a FROM whose reference names no build (a
//     digest, latest) and whose image or index offers no variant of the
//     build. Without it such a base passes lint and the build fails after
//     the solve.
//   - link-in-windows-stage: a COPY --link or ADD --link in a stage whose
//     filesystem becomes a Windows image (the Windows target stage and the
//     stages it is FROM, not those it copies from). BuildKit writes a
//     layer in the Windows layout (Files/, Hives/) only when its parent
//     chain comes from a pulled Windows image; a --link layer has no
//     parent, so its files would not appear under C:\.
//
// imgctl build runs Preflight for every variant before it contacts the
// daemon, and imgctl lint runs it alone. FinalBases uses the same graph to
// name the image the final stage is built FROM, per platform.
//
// The package reads nothing but the Dockerfile it is given and what the
// caller's Options.Resolve returns: it imports neither package build, nor
// the BuildKit client, nor any registry or network code (TestDeps pins
// this). imgctl lint --resolve reads bases through its registry client.
package lint
