package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/snapshot"
	"github.com/imgctl/imgctl/verify"
)

// Notes is what the release notes are made of: imgctl's own outputs, not
// values computed here.
type Notes struct {
	// Version is the release tag.
	Version string
	// Image is the image reference by digest, REPO:TAG@sha256:....
	Image string
	// Index is `imgctl inspect -o json` of the image: the raw index.
	Index []byte
	// Verify is `imgctl verify -o json` of the image.
	Verify []byte
	// Archives are the archive file names, in Targets order.
	Archives []string
	// Signed says whether the image was signed and the signature checked.
	Signed bool
	// Linux are the image's Linux platforms, which the check the notes
	// show requires; empty means a release's (linux/amd64, linux/arm64).
	Linux []string
}

// PlatformRow is one image of the index in the release notes.
type PlatformRow struct {
	// Platform is os/arch[/variant].
	Platform string
	// OSVersion is the descriptor's os.version ("" for Linux).
	OSVersion string
	// Digest is the image manifest's digest.
	Digest string
	// Selected lists the --target releases whose deciding engine runs
	// this image, as imgctl verify reported them.
	Selected []string
}

// Rows reads the platform table from imgctl inspect -o json and verify -o
// json: one row per image of the index (attestation manifests left out),
// in index order.
func (n Notes) Rows() ([]PlatformRow, error) {
	im, err := v1.ParseIndexManifest(bytes.NewReader(n.Index))
	if err != nil {
		return nil, fmt.Errorf("reading imgctl inspect -o json: %w", err)
	}
	var rep verify.Report
	if err := json.Unmarshal(n.Verify, &rep); err != nil {
		return nil, fmt.Errorf("reading imgctl verify -o json: %w", err)
	}
	// A host's first row is its deciding engine's (verify.HostResult.Deciding).
	selected := map[string][]string{}
	seen := map[string]bool{}
	for _, t := range rep.Targets {
		if seen[t.Target] {
			continue
		}
		seen[t.Target] = true
		if t.Selected != "" {
			selected[t.Selected] = append(selected[t.Selected], t.Target)
		}
	}
	var rows []PlatformRow
	for _, d := range im.Manifests {
		if d.Annotations[snapshot.AnnotationReferenceType] == snapshot.AttestationManifest {
			continue
		}
		r := PlatformRow{Digest: d.Digest.String(), Selected: selected[d.Digest.String()]}
		if p := d.Platform; p != nil {
			r.Platform, r.OSVersion = p.OS+"/"+p.Architecture, p.OSVersion
			if p.Variant != "" {
				r.Platform += "/" + p.Variant
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// Write writes the release notes in Markdown: the image, its platform
// table, how to check it, and the downloads.
func (n Notes) Write(w io.Writer) error {
	rows, err := n.Rows()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# imgctl %s\n\n## Container image\n\n`%s`\n\n", n.Version, n.Image)
	b.WriteString("Built, verified and signed by imgctl itself. LTSC selected: the Windows Server\n" +
		"releases on which containerd 2.x runs that image (imgctl verify --windows).\n\n")
	b.WriteString("| platform | os.version | digest | LTSC selected |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", r.Platform, r.OSVersion, r.Digest, strings.Join(r.Selected, ", "))
	}
	repo, _, _ := strings.Cut(n.Image, "@")
	b.WriteString("\nCheck it before you deploy it:\n\n```sh\n")
	linux := linuxPlatforms
	if len(n.Linux) > 0 {
		linux = strings.Join(n.Linux, ",")
	}
	fmt.Fprintf(&b, "imgctl verify %s --windows %s --require-platform %s", n.Image, windowsReleases, linux)
	if n.Signed {
		b.WriteString(" --key cosign.pub")
	}
	fmt.Fprintf(&b, "\nimgctl resolve %s --platform windows/amd64:10.0.26100\n```\n", repo)
	b.WriteString("\n## Downloads\n\n")
	for _, a := range n.Archives {
		fmt.Fprintf(&b, "- `%s`\n", a)
	}
	fmt.Fprintf(&b, "\nCheck them with `sha256sum -c %s --ignore-missing`.\n", ChecksumsName)
	_, err = io.WriteString(w, b.String())
	return err
}
