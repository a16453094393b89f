package spdxos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// PredicateSPDX is the in-toto predicate type of an SPDX document.
const PredicateSPDX = "https://spdx.dev/Document"

// SPDX identifiers of the elements AddWindows adds.
const (
	OSID   = "SPDXRef-OperatingSystem-windows"
	BaseID = "SPDXRef-BaseImage-windows"
)

// ErrNotSPDX is returned for a statement whose predicate is not an SPDX
// 2.x document.
var ErrNotSPDX = errors.New("not an SPDX 2 statement")

// AddWindows adds to statement (an in-toto statement whose predicate is an
// SPDX 2.x JSON document, as BuildKit attaches an SBOM) the operating
// system of w and its base:
//   - a package of primaryPackagePurpose OPERATING-SYSTEM: the product
//     (Product), the version w.OSVersion, Microsoft as supplier and, for a
//     known release, a CPE 2.3 security reference (CPE);
//   - a package of primaryPackagePurpose CONTAINER for the base at
//     w.BaseDigest, with its SHA256 checksum and pkg:oci package URL
//     (PURL);
//   - the relationships: each element the document DESCRIBES (the image;
//     the document itself when it describes none) CONTAINS the operating
//     system and is DESCENDANT_OF the base, and the base CONTAINS the
//     operating system.
//
// The new packages and relationships are appended to the document's
// arrays (which are made if absent) by splicing: every other byte of the
// statement, the subject and the scanner's packages, files and
// relationships, stays as it was. A statement that already holds the
// identifiers OSID or BaseID is refused.
func AddWindows(statement []byte, w Windows) ([]byte, error) {
	doc, err := readDocument(statement)
	if err != nil {
		return nil, err
	}
	if slices.Contains(doc.ids, OSID) || slices.Contains(doc.ids, BaseID) {
		return nil, fmt.Errorf("the SBOM already has %s or %s", OSID, BaseID)
	}
	pkgs, err := packages(w)
	if err != nil {
		return nil, err
	}
	var rels []relationship
	for _, root := range doc.roots() {
		rels = append(rels, relationship{root, "CONTAINS", OSID}, relationship{root, "DESCENDANT_OF", BaseID})
	}
	rels = append(rels, relationship{BaseID, "CONTAINS", OSID})
	pj, err := encodeItems(pkgs)
	if err != nil {
		return nil, err
	}
	rj, err := encodeItems(rels)
	if err != nil {
		return nil, err
	}
	loc, err := locate(statement)
	if err != nil {
		return nil, err
	}
	return splice(statement, []insertion{loc.packages.insert("packages", pj, loc.end), loc.relationships.insert("relationships", rj, loc.end)}), nil
}

// document is what AddWindows reads of an SPDX document.
type document struct {
	ids       []string // every package's, file's and snippet's SPDXID
	describes []string // documentDescribes and the document's DESCRIBES relationships
}

// roots are the elements the document describes, else the document.
func (d document) roots() []string {
	if len(d.describes) == 0 {
		return []string{"SPDXRef-DOCUMENT"}
	}
	out := slices.Clone(d.describes)
	sort.Strings(out)
	return slices.Compact(out)
}

func readDocument(statement []byte) (document, error) {
	var st struct {
		PredicateType string `json:"predicateType"`
		Predicate     *struct {
			SPDXVersion       string   `json:"spdxVersion"`
			SPDXID            string   `json:"SPDXID"`
			DocumentDescribes []string `json:"documentDescribes"`
			Packages          []struct {
				SPDXID string `json:"SPDXID"`
			} `json:"packages"`
			Files []struct {
				SPDXID string `json:"SPDXID"`
			} `json:"files"`
			Relationships []relationship `json:"relationships"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return document{}, fmt.Errorf("reading the SBOM statement: %w", err)
	}
	p := st.Predicate
	if st.PredicateType != PredicateSPDX || p == nil || !strings.HasPrefix(p.SPDXVersion, "SPDX-2.") {
		return document{}, fmt.Errorf("%w: predicate type %q", ErrNotSPDX, st.PredicateType)
	}
	doc := document{describes: slices.Clone(p.DocumentDescribes)}
	for _, pk := range p.Packages {
		doc.ids = append(doc.ids, pk.SPDXID)
	}
	for _, f := range p.Files {
		doc.ids = append(doc.ids, f.SPDXID)
	}
	self := p.SPDXID
	if self == "" {
		self = "SPDXRef-DOCUMENT"
	}
	for _, r := range p.Relationships {
		if r.Element == self && r.Type == "DESCRIBES" {
			doc.describes = append(doc.describes, r.Related)
		}
	}
	return doc, nil
}

// relationship is an SPDX 2.3 JSON relationship.
type relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// spdxPackage is the SPDX 2.3 JSON package AddWindows writes.
type spdxPackage struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	Version          string        `json:"versionInfo,omitempty"`
	Supplier         string        `json:"supplier,omitempty"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []checksum    `json:"checksums,omitempty"`
	LicenseConcluded string        `json:"licenseConcluded"`
	LicenseDeclared  string        `json:"licenseDeclared"`
	CopyrightText    string        `json:"copyrightText"`
	Comment          string        `json:"comment,omitempty"`
	ExternalRefs     []externalRef `json:"externalRefs,omitempty"`
	Purpose          string        `json:"primaryPackagePurpose"`
}

type checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type externalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

const noAssertion = "NOASSERTION"

// packages are the operating system's and the base's packages.
func packages(w Windows) ([]spdxPackage, error) {
	if w.OSVersion == "" || w.Base == "" || w.BaseDigest == "" {
		return nil, fmt.Errorf("the Windows SBOM entry needs the os.version, the base and its digest (got %q, %q, %q)", w.OSVersion, w.Base, w.BaseDigest)
	}
	alg, hex, ok := strings.Cut(w.BaseDigest, ":")
	if !ok || alg != "sha256" {
		return nil, fmt.Errorf("base digest %q: want sha256:HEX", w.BaseDigest)
	}
	purl, err := PURL(w)
	if err != nil {
		return nil, err
	}
	os := spdxPackage{
		Name: Product(w.Base), SPDXID: OSID, Version: w.OSVersion, Supplier: "Organization: Microsoft Corporation",
		DownloadLocation: noAssertion, LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
		Comment: "The Windows release of the image's base, from the image config's os.version " +
			"(10.0.BUILD.REV: the revision is the monthly cumulative update) and the base reference; recorded by imgctl without reading the base's files.",
		Purpose: "OPERATING-SYSTEM",
	}
	if cpe, ok := CPE(w.OSVersion); ok {
		os.ExternalRefs = []externalRef{{Category: "SECURITY", Type: "cpe23Type", Locator: cpe}}
	}
	base := spdxPackage{
		Name: baseName(w.Base), SPDXID: BaseID, Version: w.BaseDigest,
		DownloadLocation: noAssertion, LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
		Checksums:    []checksum{{Algorithm: "SHA256", Value: hex}},
		Comment:      "The base image " + w.Base + " at the digest the build pinned; the image is its descendant.",
		ExternalRefs: []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl}},
		Purpose:      "CONTAINER",
	}
	return []spdxPackage{os, base}, nil
}

// baseName is the base's repository without tag or digest.
func baseName(base string) string {
	if i := strings.LastIndex(base, "@"); i >= 0 {
		base = base[:i]
	}
	if i := strings.LastIndex(base, ":"); i > strings.LastIndex(base, "/") {
		base = base[:i]
	}
	return base
}

// encodeItems writes items as comma-separated JSON values, without HTML
// escaping (a package URL's & stays).
func encodeItems[T any](items []T) ([]byte, error) {
	var b bytes.Buffer
	for i, it := range items {
		var one bytes.Buffer
		enc := json.NewEncoder(&one)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it); err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
	}
	return b.Bytes(), nil
}
