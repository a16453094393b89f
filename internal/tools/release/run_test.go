package release

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFakeImgctl is the binary TestRunBinary runs: this test binary, told
// by the environment to print its arguments and its stdin and exit with
// the code its last argument names.
func TestFakeImgctl(t *testing.T) {
	if os.Getenv("IMGCTL_RELEASE_FAKE") != "1" {
		t.Skip("run by TestRunBinary")
	}
	args := flag.Args()
	var in bytes.Buffer
	_, _ = in.ReadFrom(os.Stdin)
	fmt.Printf("args %s stdin %s\n", strings.Join(args, " "), in.String())
	fmt.Fprintln(os.Stderr, "to stderr")
	code, _ := strconv.Atoi(args[len(args)-1])
	os.Exit(code)
}

// TestRunBinary checks the Runner that runs a binary: arguments, stdin,
// stdout and stderr pass through, its exit code is the Runner's, and a
// binary that cannot start is -1 with the reason on stderr.
func TestRunBinary(t *testing.T) {
	t.Setenv("IMGCTL_RELEASE_FAKE", "1")
	run := RunBinary(os.Args[0])
	for _, code := range []int{0, 3} {
		var out, errOut bytes.Buffer
		got := run(t.Context(), []string{"-test.run=^TestFakeImgctl$", "--", "verify", strconv.Itoa(code)}, strings.NewReader("in"), &out, &errOut)
		if got != code || out.String() != "args verify "+strconv.Itoa(code)+" stdin in\n" || errOut.String() != "to stderr\n" {
			t.Errorf("exit %d: got %d, stdout %q, stderr %q", code, got, out.String(), errOut.String())
		}
	}
	var errOut bytes.Buffer
	missing := filepath.Join(t.TempDir(), "imgctl")
	if got := RunBinary(missing)(t.Context(), []string{"version"}, strings.NewReader(""), &bytes.Buffer{}, &errOut); got != -1 || !strings.Contains(errOut.String(), missing) {
		t.Errorf("missing binary: exit %d, stderr %q", got, errOut.String())
	}
}

// TestRunNeedsTheHostBinary checks that Run without Config.Imgctl refuses
// targets that leave out the host, whose binary would run imgctl, before
// it empties Dist.
func TestRunNeedsTheHostBinary(t *testing.T) {
	host := Target{runtime.GOOS, runtime.GOARCH}
	others := slices.DeleteFunc(Targets(), func(t Target) bool { return t == host })
	dist := t.TempDir()
	keep := filepath.Join(dist, "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Root: t.TempDir(), Dist: dist, Targets: others, Stamp: Stamp{Version: "v0.1.0", Time: "2026-12-01T20:00:00Z"}}
	if _, err := Run(t.Context(), c); err == nil || !strings.Contains(err.Error(), "Config.Imgctl") {
		t.Errorf("Run: %v, want a refusal naming Config.Imgctl", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("Run emptied Dist before refusing: %v", err)
	}
}

// TestImagePlatforms checks which Linux platforms the image gets from the
// targets, and that targets leaving the image without a binary are
// refused before anything is compiled.
func TestImagePlatforms(t *testing.T) {
	for _, tc := range []struct {
		targets string
		want    []string
	}{
		{"linux/amd64,linux/arm64,windows/amd64,darwin/arm64", []string{"linux/amd64", "linux/arm64"}},
		{"linux/amd64,windows/amd64", []string{"linux/amd64"}},
		{"windows/amd64,linux/arm64", []string{"linux/arm64"}},
		{"linux/amd64,linux/arm64", nil},
		{"windows/amd64,darwin/arm64", nil},
	} {
		targets, err := ParseTargets(tc.targets)
		if err != nil {
			t.Fatal(err)
		}
		got, err := imagePlatforms(targets)
		if !slices.Equal(got, tc.want) || (err == nil) != (tc.want != nil) {
			t.Errorf("%s: %v, %v; want %v", tc.targets, got, err, tc.want)
		}
		if tc.want != nil {
			continue
		}
		dist := t.TempDir()
		c := Config{Root: t.TempDir(), Dist: dist, Targets: targets, Stamp: Stamp{Version: "v0.1.0", Time: "2026-12-01T20:00:00Z"},
			Imgctl: func(context.Context, []string, io.Reader, io.Writer, io.Writer) int { return 0 }}
		if _, err := Run(t.Context(), c); err == nil || !strings.Contains(err.Error(), "windows/amd64 and a Linux target") {
			t.Errorf("Run with %s: %v, want the refusal", tc.targets, err)
		}
		if _, err := os.Stat(filepath.Join(dist, "bin")); !os.IsNotExist(err) {
			t.Errorf("Run with %s compiled before refusing: %v", tc.targets, err)
		}
	}
}
