package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

// variant is one image: its digest and os.version.
type variant struct {
	Digest    string
	OSVersion string
}

// state is an index as imgctl shows it: its digest, its images by
// platform (imgctl inspect -o json) and the image a node of each LTSC
// release pulls (imgctl resolve -o json, containerd 2).
type state struct {
	Digest    string
	Platforms []string           // index order, attestation manifests left out
	Variants  map[string]variant // by platform
	Selected  map[string]variant // by LTSC release
}

// inspect reads the state of the index at ref.
func (s *story) inspect(ref string) (state, error) {
	raw, err := s.query("inspect", ref)
	if err != nil {
		return state{}, err
	}
	// inspect -o json prints the manifest's exact bytes and a newline.
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return state{}, err
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return state{}, fmt.Errorf("%s: %w", ref, err)
	}
	st := state{Digest: h.String(), Variants: map[string]variant{}, Selected: map[string]variant{}}
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS == "unknown" {
			continue // an attestation manifest
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		if r := platform.ReleaseName(m.Platform.OSVersion); r != "" {
			p += " " + r
		}
		st.Platforms = append(st.Platforms, p)
		st.Variants[p] = variant{Digest: m.Digest.String(), OSVersion: m.Platform.OSVersion}
	}
	for _, name := range platform.DefaultTargets {
		if st.Selected[name], err = s.resolve(ref, name); err != nil {
			return state{}, err
		}
	}
	return st, nil
}

// resolve returns the image a containerd 2 node of the LTSC release
// pulls from ref.
func (s *story) resolve(ref, release string) (variant, error) {
	t, err := platform.ParseTarget(release)
	if err != nil {
		return variant{}, err
	}
	var r struct {
		Digest   string             `json:"digest"`
		Platform *platform.Platform `json:"platform"`
	}
	if err := s.queryJSON(&r, "resolve", ref, "--platform", platform.Format(t.Host())); err != nil {
		return variant{}, err
	}
	v := variant{Digest: r.Digest}
	if r.Platform != nil {
		v.OSVersion = r.Platform.OSVersion
	}
	return v, nil
}

// nodes returns the rows of imgctl verify --nodes: what each node pulls.
func (s *story) nodes(ref, file string) ([]verify.TargetResult, error) {
	var rep verify.Report
	if err := s.queryJSON(&rep, "verify", ref, "--nodes", file); err != nil {
		return nil, err
	}
	return rep.Targets, nil
}

// changes writes, for each row, its digest and os.version, old → new.
type changes struct{ tw *tabwriter.Writer }

func newChanges(w io.Writer) changes {
	fmt.Fprintln(w, "\nwhat changed:")
	return changes{tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

// row writes one line; a zero old means the thing is new.
func (c changes) row(label string, old, cur variant) {
	fmt.Fprintf(c.tw, "  %s\t%s\t%s\n", label, arrow(short(old.Digest), short(cur.Digest)), osVersion(old.OSVersion, cur.OSVersion))
}

// state writes the index digest, each image and each LTSC selection.
func (c changes) state(old, cur state) {
	c.row("index", variant{Digest: old.Digest}, variant{Digest: cur.Digest})
	for _, p := range cur.Platforms {
		c.row(p, old.Variants[p], cur.Variants[p])
	}
	for _, r := range platform.DefaultTargets {
		c.row(r+" node pulls", old.Selected[r], cur.Selected[r])
	}
}

// nodes writes what each node pulls.
func (c changes) nodes(old, cur []verify.TargetResult) {
	prev := map[string]verify.TargetResult{}
	for _, n := range old {
		prev[n.Target] = n
	}
	for _, n := range cur {
		o := prev[n.Target]
		c.row(fmt.Sprintf("node %s (%s)", n.Target, n.Engine), variant{o.Selected, o.OSVersion}, variant{n.Selected, n.OSVersion})
	}
}

func (c changes) flush() error { return c.tw.Flush() }

// arrow is "old → new", "new (unchanged)", or "new" when there was nothing.
func arrow(old, cur string) string {
	switch old {
	case "":
		return cur
	case cur:
		return cur + " (unchanged)"
	}
	return old + " → " + cur
}

func osVersion(old, cur string) string {
	switch cur {
	case "":
		return ""
	case old:
		return "os.version " + cur
	}
	return "os.version " + arrow(old, cur)
}

// short is a digest cut to 12 hex digits, as docker prints image IDs.
func short(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}
