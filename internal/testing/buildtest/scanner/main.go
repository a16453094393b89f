// Command scanner is the SBOM generator of imgctl's offline tests: a
// BuildKit scanner (the protocol of BuildKit's frontend/attestations/sbom)
// that lists every regular file it is shown, with its sha256, in an SPDX
// 2.3 document wrapped in an in-toto statement. It stands in for
// docker/buildkit-syft-scanner, which the tests cannot pull; buildtest
// builds it (CGO_ENABLED=0) and packs it into a linux/amd64 image
// (buildtest.PushScanner).
//
// The protocol: BuildKit runs the image's entrypoint on the build platform
// with the scanned result mounted read-only at $BUILDKIT_SCAN_SOURCE, other
// states (build context, stages) under $BUILDKIT_SCAN_SOURCE_EXTRAS/sbom-NAME
// when the frontend asks for them, and an empty $BUILDKIT_SCAN_DESTINATION.
// Every file written there must be an in-toto statement; one whose
// predicateType is https://spdx.dev/Document is an SBOM, and a bare SPDX
// document is rejected. The statement named sbom.* is the core SBOM, the
// one of the image; sbom-NAME.* are the extras. BuildKit fills in the
// subjects.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	intoto "github.com/in-toto/in-toto-golang/in_toto"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// Tool is the SPDX creator the documents name.
const Tool = "imgctl-test-scanner" // buildtest.ScannerTool

func main() {
	if err := run(os.Getenv("BUILDKIT_SCAN_SOURCE"), os.Getenv("BUILDKIT_SCAN_SOURCE_EXTRAS"), os.Getenv("BUILDKIT_SCAN_DESTINATION")); err != nil {
		fmt.Fprintln(os.Stderr, "scanner:", err)
		os.Exit(1)
	}
}

// run writes sbom.spdx.json for src and sbom-NAME.spdx.json for each
// directory sbom-NAME under extras into dst.
func run(src, extras, dst string) error {
	if src == "" || dst == "" {
		return fmt.Errorf("BUILDKIT_SCAN_SOURCE and BUILDKIT_SCAN_DESTINATION must be set")
	}
	if err := write(src, "sbom", dst); err != nil {
		return err
	}
	if extras == "" {
		return nil
	}
	entries, err := os.ReadDir(extras)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "sbom-") {
			if err := write(filepath.Join(extras, e.Name()), e.Name(), dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// write scans root and writes the statement dst/NAME.spdx.json.
func write(root, name, dst string) error {
	doc, err := scan(root, name)
	if err != nil {
		return fmt.Errorf("scanning %s: %w", root, err)
	}
	st := intoto.Statement{
		// No subject: BuildKit names the image it attaches the statement to.
		StatementHeader: intoto.StatementHeader{Type: intoto.StatementInTotoV01, PredicateType: intoto.PredicateSPDX, Subject: []intoto.Subject{}},
		Predicate:       doc,
	}
	dt, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, name+".spdx.json"), dt, 0o644)
}

// scan lists every regular file under root, as an absolute path in the
// scanned tree, with its sha256.
func scan(root, name string) (*spdx.Document, error) {
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      name,
		DocumentNamespace: "https://imgctl.invalid/spdx/" + name,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: Tool}},
			Created:  "1970-01-01T00:00:00Z", // reproducible: the same tree gives the same document
		},
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		sum, err := sha256File(p)
		if err != nil {
			return err
		}
		doc.Files = append(doc.Files, &spdx.File{
			FileName:           path.Join("/", filepath.ToSlash(rel)),
			FileSPDXIdentifier: common.ElementID(fmt.Sprintf("File-%d", len(doc.Files)+1)),
			Checksums:          []common.Checksum{{Algorithm: common.SHA256, Value: sum}},
			FileCopyrightText:  "NOASSERTION",
		})
		return nil
	})
	return doc, err
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
