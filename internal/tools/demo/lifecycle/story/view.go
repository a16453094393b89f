package story

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

// Variant is one image: its digest and os.version.
type Variant struct {
	// Digest is the image manifest's digest.
	Digest string
	// OSVersion is the platform's os.version: empty but for Windows.
	OSVersion string
}

// State is an index as imgctl shows it: its digest, its images by
// platform (imgctl inspect -o json) and the image a node of each LTSC
// release pulls (imgctl resolve -o json, containerd 2).
type State struct {
	// Digest is the index's digest.
	Digest string
	// Platforms are the images' platforms, "os/arch" and, for Windows,
	// the LTSC release ("windows/amd64 ltsc2025"), in index order,
	// attestation manifests left out.
	Platforms []string
	// Variants are the images by platform, as in Platforms.
	Variants map[string]Variant
	// Selected are the images a containerd 2 node pulls, by LTSC release
	// (platform.DefaultTargets: ltsc2022, ltsc2025).
	Selected map[string]Variant
}

// inspect reads the state of the index at ref.
func (s *story) inspect(ref string) (State, error) {
	raw, err := s.query("inspect", ref)
	if err != nil {
		return State{}, err
	}
	// inspect -o json prints the manifest's exact bytes and a newline.
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return State{}, err
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", ref, err)
	}
	st := State{Digest: h.String(), Variants: map[string]Variant{}, Selected: map[string]Variant{}}
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS == "unknown" {
			continue // an attestation manifest
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		if r := platform.ReleaseName(m.Platform.OSVersion); r != "" {
			p += " " + r
		}
		st.Platforms = append(st.Platforms, p)
		st.Variants[p] = Variant{Digest: m.Digest.String(), OSVersion: m.Platform.OSVersion}
	}
	for _, name := range platform.DefaultTargets {
		if st.Selected[name], err = s.resolve(ref, name); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

// resolve returns the image a containerd 2 node of the LTSC release
// pulls from ref.
func (s *story) resolve(ref, release string) (Variant, error) {
	t, err := platform.ParseTarget(release)
	if err != nil {
		return Variant{}, err
	}
	var r struct {
		Digest   string             `json:"digest"`
		Platform *platform.Platform `json:"platform"`
	}
	if err := s.queryJSON(&r, "resolve", ref, "--platform", platform.Format(t.Host())); err != nil {
		return Variant{}, err
	}
	v := Variant{Digest: r.Digest}
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
func (c changes) row(label string, old, cur Variant) {
	fmt.Fprintf(c.tw, "  %s\t%s\t%s\n", label, arrow(short(old.Digest), short(cur.Digest)), osVersion(old.OSVersion, cur.OSVersion))
}

// state writes the index digest, each image and each LTSC selection.
func (c changes) state(old, cur State) {
	c.row("index", Variant{Digest: old.Digest}, Variant{Digest: cur.Digest})
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
		c.row(fmt.Sprintf("node %s (%s)", n.Target, n.Engine), Variant{o.Selected, o.OSVersion}, Variant{n.Selected, n.OSVersion})
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
