// Command syftscanner is docker/buildkit-syft-scanner v1.12.0, the SBOM
// generator BuildKit runs by default for attest:sbom, rebuilt from its
// source with the same Syft (github.com/anchore/syft v1.51.0) and the same
// module versions (go.mod is v1.12.0's), because the scanner's own module
// is not served by the Go module proxy. imgctl uses it for the measurement
// of what BuildKit's scanner reports from a Windows base
// (docs/sbom-windows.md); the offline tests use the smaller stand-in in
// internal/testing/buildtest/scanner.
//
// The scan is the upstream one, unchanged: cmd/syft-scanner/main.go,
// internal/scanner.go and internal/target.go of
// github.com/docker/buildkit-syft-scanner at v1.12.0 (Apache License 2.0,
// Copyright 2022 buildkit-syft-scanner authors), folded into one file.
// What differs: the Syft version in the document's creator is read from
// the binary's build information instead of a link-time flag.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/anchore/go-logger"
	alogrus "github.com/anchore/go-logger/adapter/logrus"
	"github.com/anchore/stereoscope"
	"github.com/anchore/syft/syft"
	"github.com/anchore/syft/syft/cataloging/filecataloging"
	"github.com/anchore/syft/syft/cataloging/pkgcataloging"
	"github.com/anchore/syft/syft/format"
	"github.com/anchore/syft/syft/format/spdxjson"
	"github.com/anchore/syft/syft/sbom"
	"github.com/anchore/syft/syft/source"
	intoto "github.com/in-toto/in-toto-golang/in_toto"

	// register sqlite driver for RPMDBs scan support with syft
	_ "modernc.org/sqlite"
)

// Environment of BuildKit's scanner protocol.
const (
	envScanDestination  = "BUILDKIT_SCAN_DESTINATION"
	envScanSource       = "BUILDKIT_SCAN_SOURCE"
	envScanSourceExtras = "BUILDKIT_SCAN_SOURCE_EXTRAS"
	envLogLevel         = "LOG_LEVEL"
)

func main() {
	if err := enableLogs(); err != nil {
		panic(fmt.Sprintf("unable to initialize logger: %+v", err))
	}
	// As upstream: syft fails without /tmp.
	if err := os.Mkdir("/tmp", 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		panic("could not create /tmp directory")
	}
	s, err := scannerFromEnvironment()
	if err != nil {
		panic(err)
	}
	if err := s.scan(context.Background()); err != nil {
		panic(err)
	}
}

func enableLogs() error {
	level, ok := os.LookupEnv(envLogLevel)
	if !ok {
		level = "warn"
	}
	lw, err := alogrus.New(alogrus.Config{EnableConsole: true, Level: logger.Level(level)})
	if err != nil {
		return err
	}
	syft.SetLogger(lw)
	stereoscope.SetLogger(lw.Nested("from-lib", "stereoscope"))
	return nil
}

// scanner is upstream's internal.Scanner.
type scanner struct {
	core        target
	extras      []target
	destination string
}

func scannerFromEnvironment() (*scanner, error) {
	dst, err := pathFromEnvironment(envScanDestination, true)
	if err != nil {
		return nil, err
	}
	core, err := pathFromEnvironment(envScanSource, true)
	if err != nil {
		return nil, err
	}
	extrasPath, err := pathFromEnvironment(envScanSourceExtras, false)
	if err != nil {
		return nil, err
	}
	s := &scanner{destination: dst, core: target{path: core}}
	if extrasPath != "" {
		entries, err := os.ReadDir(extrasPath)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			s.extras = append(s.extras, target{path: filepath.Join(extrasPath, e.Name())})
		}
	}
	return s, nil
}

func pathFromEnvironment(name string, required bool) (string, error) {
	p, ok := os.LookupEnv(name)
	if !ok {
		if !required {
			return "", nil
		}
		return "", fmt.Errorf("required variable %q not set", name)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("variable %q (%q): %w", name, p, err)
	}
	return p, nil
}

// scan writes NAME.spdx.json, an in-toto statement with Syft's SPDX JSON
// as its predicate, for the core target and each extra.
func (s *scanner) scan(ctx context.Context) error {
	for _, t := range append([]target{s.core}, s.extras...) {
		result, err := t.scan(ctx)
		if err != nil {
			return err
		}
		enc, err := spdxjson.NewFormatEncoderWithConfig(spdxjson.DefaultEncoderConfig())
		if err != nil {
			return err
		}
		out, err := format.Encode(result, enc)
		if err != nil {
			return err
		}
		st := intoto.Statement{
			StatementHeader: intoto.StatementHeader{Type: intoto.StatementInTotoV1, PredicateType: intoto.PredicateSPDX},
			Predicate:       json.RawMessage(out),
		}
		if err := writeJSON(filepath.Join(s.destination, t.name()+".spdx.json"), st); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(p string, v any) (retErr error) {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Close(); retErr == nil && err != nil {
			retErr = err
		}
	}()
	return json.NewEncoder(f).Encode(v)
}

// target is upstream's internal.Target: one directory to scan.
type target struct{ path string }

func (t target) name() string { return filepath.Base(t.path) }

func (t target) scan(ctx context.Context) (sbom.SBOM, error) {
	src, err := syft.GetSource(ctx, t.path,
		syft.DefaultGetSourceConfig().WithBasePath(t.path).WithAlias(source.Alias{Name: t.name()}))
	if err != nil {
		return sbom.SBOM{}, fmt.Errorf("failed to get source from %q: %w", t.path, err)
	}
	sr := pkgcataloging.NewSelectionRequest().
		WithDefaults(pkgcataloging.ImageTag, filecataloging.FileTag).
		WithAdditions("sbom-cataloger")
	if v, ok := os.LookupEnv("BUILDKIT_SCAN_SELECT_CATALOGERS"); ok {
		sr = pkgcataloging.NewSelectionRequest().WithExpression(strings.Split(v, ",")...)
	}
	result, err := syft.CreateSBOM(ctx, src, syft.DefaultCreateSBOMConfig().WithCatalogerSelection(sr))
	if err != nil {
		return sbom.SBOM{}, err
	}
	result.Descriptor.Name = "syft"
	result.Descriptor.Version = syftVersion()
	return *result, nil
}

// syftVersion is the linked Syft's version (upstream stamps it with -X).
func syftVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/anchore/syft" {
				return d.Version
			}
		}
	}
	return "[not provided]"
}
