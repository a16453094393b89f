package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/tonistiigi/go-csvvalue"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/platform"
)

// variantFlags are the flags build and lint share: which Dockerfile, which
// platforms and Windows releases, and the build args.
type variantFlags struct {
	file, target, baseTemplate string
	platforms, windows, bases  []string
	buildArgs                  []string
}

func (f *variantFlags) add(fl *pflag.FlagSet) {
	fl.StringVarP(&f.file, "file", "f", "", "Dockerfile (default CONTEXT/Dockerfile)")
	fl.StringSliceVar(&f.platforms, "platform", nil, "target platforms (default linux/amd64,linux/arm64,windows/amd64)")
	addWindowsReleasesFlag(fl, &f.windows)
	fl.StringSliceVar(&f.bases, "windows-base", nil, "base per release, RELEASE=REF (sets the WINDOWS_BASE build arg), e.g. ltsc2022=mcr.microsoft.com/windows/nanoserver:ltsc2022")
	fl.StringVar(&f.baseTemplate, "windows-base-template", "", "base for releases without --windows-base; {ltsc} is replaced (default "+variant.DefaultWindowsBaseTemplate+")")
	fl.StringArrayVar(&f.buildArgs, "build-arg", nil, "build arg KEY=VALUE (KEY alone takes the environment's value), repeatable")
	fl.StringVar(&f.target, "target", "", "stage to build (default: the last)")
}

// options turns the flags into build options; errors wrap ErrUsage.
func (f *variantFlags) options(contextDir string) (build.Options, error) {
	o := build.Options{ContextDir: contextDir, Dockerfile: f.file, Target: f.target}
	var err error
	if o.Variants.Platforms, err = platform.ParseList(f.platforms); err != nil {
		return o, fmt.Errorf("%w: --platform: %w", ErrUsage, err)
	}
	o.Variants.Windows = splitList(f.windows)
	o.Variants.WindowsBaseTemplate = f.baseTemplate
	if o.Variants.WindowsBases, err = keyValues("--windows-base", splitList(f.bases), false); err != nil {
		return o, err
	}
	if o.Variants.BuildArgs, err = keyValues("--build-arg", f.buildArgs, true); err != nil {
		return o, err
	}
	if _, err := variant.PlanVariants(o.Variants); err != nil {
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return o, nil
}

// parseProvenance reads a --provenance value as buildx does: mode=min or
// mode=max (also bare min, max), false (no provenance), with builder-id=URI
// and disabled=BOOL as further fields. As with buildx, only the default
// (the flag not given) is mode=min: buildx sends true, or fields without a
// mode, to BuildKit with no mode, and BuildKit's provenance then defaults
// to max (solver/llbsolver/provenance.go), so true means max here too.
// nil means none.
func parseProvenance(s string) (*build.Provenance, error) {
	s = strings.TrimSpace(s)
	if b, err := strconv.ParseBool(s); err == nil {
		if !b {
			return nil, nil
		}
		return &build.Provenance{Mode: build.ProvenanceMax}, nil
	}
	if s == build.ProvenanceMin || s == build.ProvenanceMax {
		return &build.Provenance{Mode: s}, nil
	}
	fields, off, err := attestFields("--provenance", s)
	if err != nil || off {
		return nil, err
	}
	p, err := build.ProvenanceFromFields(fields)
	if err != nil {
		return nil, fmt.Errorf("%w: --provenance %q: %w", ErrUsage, s, err)
	}
	return p, nil
}

// parseSBOM reads an --sbom value as buildx does: true (the flag alone:
// BuildKit's default generator), false, or generator=IMAGE (and
// disabled=BOOL). nil means none.
func parseSBOM(s string) (*build.SBOM, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		if !b {
			return nil, nil
		}
		return &build.SBOM{}, nil
	}
	fields, off, err := attestFields("--sbom", s)
	if err != nil || off {
		return nil, err
	}
	sb, err := build.SBOMFromFields(fields)
	if err != nil {
		return nil, fmt.Errorf("%w: --sbom %q: %w", ErrUsage, s, err)
	}
	return sb, nil
}

// attestFields splits an attestation flag's CSV value (BuildKit's and
// buildx's parser) into key=value fields; a key may appear once. off
// reports disabled=true, which buildx takes as "none" whatever else is
// given; the disabled field is not among the fields.
func attestFields(flag, s string) (fields map[string]string, off bool, err error) {
	cells, err := csvvalue.Fields(s, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s %q: %w", ErrUsage, flag, s, err)
	}
	fields = map[string]string{}
	for _, f := range cells {
		k, v, ok := strings.Cut(f, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" || v == "" {
			return nil, false, fmt.Errorf("%w: %s %q: %q is not key=value", ErrUsage, flag, s, f)
		}
		if _, dup := fields[k]; dup {
			return nil, false, fmt.Errorf("%w: %s %q: %s given twice", ErrUsage, flag, s, k)
		}
		fields[k] = v
	}
	if v, ok := fields["disabled"]; ok {
		delete(fields, "disabled")
		if off, err = strconv.ParseBool(v); err != nil {
			return nil, false, fmt.Errorf("%w: %s %q: disabled: %w", ErrUsage, flag, s, err)
		}
	}
	return fields, off, nil
}
