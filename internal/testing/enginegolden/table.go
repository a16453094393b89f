package enginegolden

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/image-spec/specs-go/v1"
)

// Releases are the containerd releases the table covers, one for each
// platforms version a supported release line pins.
var Releases = []string{"1.7.30", "2.0.0", "2.1.5", "2.2.7", "2.3.4", "2.4.0"}

// Entry is one child of an index: its descriptor platform (nil when the
// descriptor has none) and the platform of its image config.
type Entry struct {
	Platform *specs.Platform `json:"platform,omitempty"`
	Config   specs.Platform  `json:"config"`
}

// Case is one Windows host, "10.0.BUILD", and one index.
type Case struct {
	Name    string  `json:"name,omitempty"`
	Host    string  `json:"host"`
	Entries []Entry `json:"entries"`
}

// Result is what one release runs for every case: the entry's position, or
// -1 when it finds no match.
type Result struct {
	// Release is the containerd release, "1.7.30".
	Release string `json:"release"`
	// Platforms is the github.com/containerd/platforms version it links.
	Platforms string `json:"platforms"`
	// Default is images.Manifest with platforms.Default() on the node.
	Default []int `json:"default"`
	// Only is images.Manifest with platforms.Only(host), as Docker's
	// containerd image store composes it.
	Only []int `json:"only"`
}

// Table is the golden table: the cases and every release's answers.
type Table struct {
	Cases   []Case   `json:"cases"`
	Results []Result `json:"results"`
}

// Load reads a table file.
func Load(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &t, nil
}

// Encode writes the table as the checked-in file holds it: one case or
// result a line, so that a change shows as a small diff.
func (t *Table) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\"cases\": [\n")
	for i, c := range t.Cases {
		if err := line(&b, c, i == len(t.Cases)-1); err != nil {
			return nil, err
		}
	}
	b.WriteString("],\n\"results\": [\n")
	for i, r := range t.Results {
		if err := line(&b, r, i == len(t.Results)-1); err != nil {
			return nil, err
		}
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

func line(b *bytes.Buffer, v any, last bool) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	if !last {
		b.WriteByte(',')
	}
	b.WriteByte('\n')
	return nil
}

// Generate runs every release's code on the cases. toolsDir is
// internal/tools/containerd; scratch holds the overlays and binaries.
func Generate(ctx context.Context, toolsDir, scratch string, cases []Case) (*Table, error) {
	t := &Table{Cases: cases}
	for _, rel := range Releases {
		r, err := run(ctx, toolsDir, filepath.Join(scratch, rel), rel, cases)
		if err != nil {
			return nil, fmt.Errorf("containerd %s: %w", rel, err)
		}
		t.Results = append(t.Results, *r)
	}
	return t, nil
}

// run builds internal/tools/containerd for one release, with the platforms
// package's Windows files overlaid, and runs it on the cases.
func run(ctx context.Context, toolsDir, scratch, release string, cases []Case) (*Result, error) {
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	modfile := "-modfile=containerd-" + release + ".mod"
	out, err := goCmd(ctx, toolsDir, "mod", "download", modfile, "-json", "github.com/containerd/platforms")
	if err != nil {
		return nil, err
	}
	var mod struct{ Dir, Version string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("locating github.com/containerd/platforms: %v: %s", err, out)
	}
	plat := filepath.Join(scratch, "platforms")
	if err := copyPlatforms(mod.Dir, plat); err != nil {
		return nil, err
	}
	// The release's module file, with platforms replaced by the copy.
	mf := filepath.Join(scratch, "containerd.mod")
	for _, ext := range []string{".mod", ".sum"} {
		b, err := os.ReadFile(filepath.Join(toolsDir, "containerd-"+release+ext))
		if err != nil {
			return nil, err
		}
		if ext == ".mod" {
			b = append(b, "\nreplace github.com/containerd/platforms => "+plat+"\n"...)
		}
		if err := os.WriteFile(strings.TrimSuffix(mf, ".mod")+ext, b, 0o644); err != nil {
			return nil, err
		}
	}
	tags := "-tags="
	if strings.HasPrefix(release, "1.") {
		tags += "containerd1"
	}
	bin := filepath.Join(scratch, "containerd-golden")
	// With the flags every other build of the test run uses (the tools',
	// go vet's, make test's: CGO_ENABLED=0, -trimpath), so that the
	// standard library and the modules they share come compiled from the
	// build cache: on a cold cache, the default flags compiled the standard
	// library once more.
	if _, err := goCmd(ctx, toolsDir, "build", "-trimpath", "-modfile="+mf, "-mod=mod", tags, "-o", bin, "."); err != nil {
		return nil, err
	}
	in, err := json.Marshal(map[string]any{"cases": cases})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	r := &Result{Release: release}
	if err := json.Unmarshal(res, r); err != nil {
		return nil, err
	}
	if r.Platforms != mod.Version {
		return nil, fmt.Errorf("linked platforms %s, module file pins %s", r.Platforms, mod.Version)
	}
	if len(r.Default) != len(cases) || len(r.Only) != len(cases) {
		return nil, fmt.Errorf("%d and %d answers for %d cases", len(r.Default), len(r.Only), len(cases))
	}
	return r, nil
}

func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
