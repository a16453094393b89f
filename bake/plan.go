package bake

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	bx "github.com/docker/buildx/bake"
	"github.com/docker/buildx/util/buildflags"
	"github.com/docker/buildx/util/urlutil"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/moby/buildkit/session/sshforward/sshprovider"
	"go.yaml.in/yaml/v3"

	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// Target is one bake target as imgctl builds it: lint, the solves, one
// index at its tags, verify.
type Target struct {
	// Name is the target's name (a matrix target's evaluated name).
	Name string
	// Where is FILE:LINE of its definition.
	Where string
	// Tags are where its index is pushed, all in one repository.
	Tags []name.Tag
	// ContextDir is the build context directory.
	ContextDir string
	// Dockerfile is the Dockerfile path: the target's dockerfile, relative
	// to ContextDir unless absolute or cwd://.
	Dockerfile string
	// Stage is the target's Dockerfile stage (bake's target field); empty
	// means the last.
	Stage string
	// Variants are its platforms and Windows releases, and its args.
	Variants variant.VariantOptions
	// Secrets and SSH are its secret and ssh entries.
	Secrets []secretsprovider.Source
	SSH     []sshprovider.AgentConfig
	// CacheFrom and CacheTo are its cache imports and exports.
	CacheFrom, CacheTo []client.CacheOptionsEntry
	// NoCache is its no-cache.
	NoCache bool
	// Annotations are its index: annotations.
	Annotations map[string]string
	// Labels are its labels, set on every image's config.
	Labels map[string]string
	// Provenance and SBOM are its attest entries: provenance mode=min when
	// it has none (buildx's default), no SBOM when it has none.
	Provenance *build.Provenance
	SBOM       *build.SBOM
}

// Options returns base with the target's fields set: the context,
// Dockerfile, stage, variants, tags, secrets, ssh, caches, no-cache,
// annotations and attestations. The rest (the builder and nodes, the
// registry client, the logger, the skeleton cache...) is base's.
func (t Target) Options(base build.Options) build.Options {
	o := base
	o.ContextDir, o.Dockerfile, o.Target, o.Variants = t.ContextDir, t.Dockerfile, t.Stage, t.Variants
	o.Tag, o.AlsoTags = t.Tags[0], t.Tags[1:]
	o.Secrets, o.SSH, o.CacheFrom, o.CacheTo, o.NoCache = t.Secrets, t.SSH, t.CacheFrom, t.CacheTo, t.NoCache
	o.Annotations, o.Labels, o.Provenance, o.SBOM = t.Annotations, t.Labels, t.Provenance, t.SBOM
	return o
}

// Releases are the names of the Windows releases the target builds, as
// variant.PlanVariants resolves them (named, or by the os.version of a
// platform).
func (t Target) Releases() []string {
	vs, _ := variant.PlanVariants(t.Variants)
	var out []string
	for _, v := range vs {
		if v.Release.Build != 0 {
			out = append(out, v.Release.Name)
		}
	}
	return out
}

// Plan checks every target and returns them by name: what imgctl cannot
// build (ErrUnsupported), a platform or release it cannot read
// (ErrInvalidPlatform), tags it cannot publish (ErrInvalidTarget), and
// two targets that write one tag (ErrDuplicateTag). It reports every
// problem of every target, each naming its file and line. rc parses the
// tags (its insecure registries); nil means the defaults.
func (d *Definition) Plan(rc *registry.Client) ([]Target, error) {
	if rc == nil {
		rc = registry.New()
	}
	var errs []error
	errs = append(errs, d.composeFields()...)
	var out []Target
	for _, n := range d.Names() {
		t, err := d.plan(n, d.Targets[n], rc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	errs = append(errs, duplicateTags(out))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// duplicateTags refuses a tag that two targets write.
func duplicateTags(ts []Target) error {
	by := map[string]Target{}
	var errs []error
	for _, t := range ts {
		for _, tag := range t.Tags {
			if o, ok := by[tag.Name()]; ok && o.Name != t.Name {
				errs = append(errs, fmt.Errorf("%w: %s: targets %q (%s) and %q (%s)", ErrDuplicateTag, tag.Name(), o.Name, o.Where, t.Name, t.Where))
				continue
			}
			by[tag.Name()] = t
		}
	}
	return errors.Join(errs...)
}

// plan turns one resolved target into a Target.
func (d *Definition) plan(n string, bt *bx.Target, rc *registry.Client) (Target, error) {
	t := Target{Name: n, Where: d.loc.target(n), ContextDir: *bt.Context, NoCache: bt.NoCache != nil && *bt.NoCache}
	var errs []error
	fail := func(key string, sentinel error, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: target %q: %w: %s", d.loc.attr(n, key), n, sentinel, fmt.Sprintf(format, a...)))
	}
	for _, u := range unsupported(bt) {
		fail(u.key, ErrUnsupported, "%s", u.why)
	}
	df := "Dockerfile"
	if bt.Dockerfile != nil && *bt.Dockerfile != "" {
		df = *bt.Dockerfile
	}
	if v, ok := strings.CutPrefix(df, "cwd://"); ok {
		t.Dockerfile = filepath.Clean(v)
	} else if !filepath.IsAbs(df) {
		t.Dockerfile = filepath.Join(t.ContextDir, df)
	} else {
		t.Dockerfile = df
	}
	if bt.Target != nil {
		t.Stage = *bt.Target
	}
	var err error
	if t.Tags, err = tags(bt.Tags, rc); err != nil {
		fail("tags", ErrInvalidTarget, "%v", err)
	}
	if t.Variants, err = variants(bt); err != nil {
		fail("platforms", ErrInvalidPlatform, "%v", err)
	} else if b := t.Variants.BuildArgs[variant.WindowsBaseArg]; b != "" && len(t.Releases()) > 1 {
		fail("args", ErrInvalidTarget, "%s=%s names one base for %d Windows releases: put {ltsc} in it (mcr.microsoft.com/windows/nanoserver:{ltsc}), which each release replaces",
			variant.WindowsBaseArg, b, len(t.Releases()))
	}
	if t.Secrets, err = secrets(bt.Secrets); err != nil {
		fail("secret", ErrInvalidTarget, "%v", err)
	}
	t.SSH = ssh(bt.SSH)
	if t.CacheFrom, err = caches(bt.CacheFrom); err != nil {
		fail("cache-from", ErrInvalidTarget, "%v", err)
	}
	if t.CacheTo, err = caches(bt.CacheTo); err != nil {
		fail("cache-to", ErrInvalidTarget, "%v", err)
	}
	for k, v := range bt.Labels {
		if v != nil { // a label set to null is unset, as in buildx
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[k] = *v
		}
	}
	if t.Annotations, err = annotations(bt.Annotations); err != nil {
		fail("annotations", ErrUnsupported, "%v", err)
	}
	if t.Provenance, t.SBOM, err = attestations(bt.Attest); err != nil {
		fail("attest", ErrInvalidTarget, "%v", err)
	}
	return t, errors.Join(errs...)
}

// tags parses a target's tags: at least one, in one repository.
func tags(in []string, rc *registry.Client) ([]name.Tag, error) {
	if len(in) == 0 {
		return nil, errors.New("no tags: imgctl pushes each target's index to its tags")
	}
	var out []name.Tag
	for _, s := range in {
		ref, err := rc.ParseReference(s)
		if err != nil {
			return nil, fmt.Errorf("tag %q: %w", s, err)
		}
		t, ok := ref.(name.Tag)
		if !ok {
			return nil, fmt.Errorf("tag %q: want a tag, not a digest", s)
		}
		out = append(out, t)
	}
	if err := registry.SameRepository(out); err != nil {
		return nil, fmt.Errorf("%w (one index goes to one repository; copy it to another with imgctl promote)", err)
	}
	return out, nil
}

// variants reads a target's platforms and args into variant options. A
// platform is os/arch[/variant], a Windows platform with the os.version
// of an LTSC build in imgctl's form (windows/amd64:10.0.26100) or
// containerd's (windows(10.0.20348)/amd64), or an LTSC release name
// (ltsc2022), which means windows/amd64 of that release. Each release is
// one Windows variant, as imgctl build --windows makes them; a plain
// windows/amd64 without any release is one Windows variant built from the
// Dockerfile's own WINDOWS_BASE, with the os.version its base has. No
// platforms means imgctl build's default (linux/amd64, linux/arm64,
// windows/amd64). A WINDOWS_BASE arg with {ltsc} in it names each
// release's base ({ltsc} replaced); any other WINDOWS_BASE is the base of
// a single release.
func variants(bt *bx.Target) (variant.VariantOptions, error) {
	var vo variant.VariantOptions
	var errs []error
	hasWindows := false
	var list []string
	for _, s := range bt.Platforms { // --set TARGET.platform=a,b is one entry, as in buildx
		list = append(list, strings.Split(s, ",")...)
	}
	for _, s := range list {
		if r, ok := variant.ReleaseByName(s); ok {
			vo.Windows = append(vo.Windows, r.Name)
			continue
		}
		p, err := platform.Parse(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: want os/arch[/variant], windows/amd64:10.0.BUILD, windows(10.0.BUILD)/amd64 or an LTSC release (%s): %w", s, releaseNames(), err))
			continue
		}
		if p.OS == "windows" {
			hasWindows = true
			if p.OSVersion != "" {
				if err := ltscPlatform(p); err != nil {
					errs = append(errs, fmt.Errorf("%q: %w", s, err))
					continue
				}
			}
		}
		vo.Platforms = append(vo.Platforms, p)
	}
	if len(vo.Windows) > 0 && !hasWindows {
		vo.Platforms = append(vo.Platforms, v1.Platform{OS: "windows", Architecture: "amd64"})
	}
	for k, v := range bt.Args {
		if v == nil {
			continue
		}
		if k == variant.WindowsBaseArg && strings.Contains(*v, "{ltsc}") {
			vo.WindowsBaseTemplate = *v
			continue
		}
		if vo.BuildArgs == nil {
			vo.BuildArgs = map[string]string{}
		}
		vo.BuildArgs[k] = *v
	}
	if err := errors.Join(errs...); err != nil {
		return vo, err
	}
	if _, err := variant.PlanVariants(vo); err != nil {
		return vo, err
	}
	return vo, nil
}

// ltscPlatform refuses a Windows platform whose os.version is not of an
// LTSC build, or whose architecture imgctl does not build Windows for.
func ltscPlatform(p v1.Platform) error {
	b, ok := platform.Build(p.OSVersion)
	if _, known := platform.ReleaseForBuild(b); !ok || !known {
		return fmt.Errorf("os.version %s is not of an LTSC release (%s)", p.OSVersion, releaseNames())
	}
	if p.Architecture != "amd64" {
		return fmt.Errorf("imgctl builds Windows variants for amd64, not %s", p.Architecture)
	}
	return nil
}

func releaseNames() string {
	var out []string
	for _, r := range platform.Releases {
		out = append(out, fmt.Sprintf("%s = 10.0.%d", r.Name, r.Build))
	}
	return strings.Join(out, ", ")
}

// annotations keeps a target's index annotations (index:KEY=VALUE), the
// only kind imgctl writes: it merges the images BuildKit made into its
// own index.
func annotations(in []string) (map[string]string, error) {
	parsed, err := buildflags.ParseAnnotations(in)
	if err != nil {
		return nil, err
	}
	var out map[string]string
	var bad []string
	for k, v := range parsed {
		if k.Type != exptypes.AnnotationIndex || k.Platform != nil {
			bad = append(bad, k.String())
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k.Key] = v
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("annotations %s: imgctl writes index annotations only (index:KEY=VALUE)", strings.Join(bad, ", "))
	}
	return out, nil
}

// attestations reads a target's attest entries: provenance (mode=min
// when absent, as buildx) and sbom; other types are refused.
func attestations(in buildflags.Attests) (*build.Provenance, *build.SBOM, error) {
	prov := &build.Provenance{Mode: build.ProvenanceMin}
	var sbom *build.SBOM
	for _, a := range in {
		var err error
		switch a.Type {
		case "provenance":
			prov = nil
			if !a.Disabled {
				prov, err = build.ProvenanceFromFields(a.Attrs)
			}
		case "sbom":
			sbom = nil
			if !a.Disabled {
				sbom, err = build.SBOMFromFields(a.Attrs)
			}
		default:
			err = fmt.Errorf("attest type %q: want provenance or sbom", a.Type)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return prov, sbom, nil
}

// unsupportedField is a field of a target imgctl does not build.
type unsupportedField struct{ key, why string }

// unsupported lists the fields of t that imgctl's build does not do,
// with the HCL name each is written under.
func unsupported(t *bx.Target) []unsupportedField {
	var out []unsupportedField
	add := func(set bool, key, why string) {
		if set {
			out = append(out, unsupportedField{key, key + ": " + why})
		}
	}
	setValues := func(m map[string]*string) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(m)), func(v *string) bool { return v != nil })
	}
	add(urlutil.IsRemoteURL(*t.Context), "context", "a remote context; imgctl builds a local directory")
	add(t.Dockerfile != nil && urlutil.IsRemoteURL(*t.Dockerfile), "dockerfile", "a remote Dockerfile; imgctl reads a local file")
	add(len(t.Contexts) > 0, "contexts", "named build contexts")
	add(t.DockerfileInline != nil, "dockerfile-inline", "write the Dockerfile to a file: imgctl lints it before it builds")
	add(t.NetworkMode != nil && *t.NetworkMode != "" && *t.NetworkMode != "default", "network", "a network mode other than default")
	add(len(t.NoCacheFilter) > 0, "no-cache-filter", "per-stage no-cache; no-cache = true disables the cache of every stage")
	add(t.ShmSize != nil, "shm-size", "the size of /dev/shm")
	add(len(t.Ulimits) > 0, "ulimits", "ulimits")
	add(t.Resources != nil && len(t.Resources.ToEntries()) > 0, "resources", "resource limits")
	add(t.Call != nil && *t.Call != "" && *t.Call != "build", "call", "a frontend method other than build")
	add(len(t.Entitlements) > 0, "entitlements", "entitlements (network.host, security.insecure)")
	add(setValues(t.ExtraHosts), "extra-hosts", "extra hosts")
	add(len(t.Policy) > 0, "policy", "buildx source policies")
	for _, o := range t.Outputs {
		if !registryOutput(o) {
			add(true, "output", fmt.Sprintf("%s: imgctl pushes each target to its tags (type=registry)", o.String()))
		}
	}
	return out
}

// registryOutput reports whether o is a push to the target's tags: type
// registry, or image with push=true, and no other attribute.
func registryOutput(o *buildflags.ExportEntry) bool {
	if o.Destination != "" {
		return false
	}
	for k, v := range o.Attrs {
		if k != "push" || v != "true" {
			return false
		}
	}
	return o.Type == "registry" || (o.Type == "image" && o.Attrs["push"] == "true")
}

// composeBuildKeys are the keys of a compose service's build section that
// imgctl builds; x- extensions are buildx's (x-bake), whose fields the
// target check sees.
var composeBuildKeys = []string{"context", "dockerfile", "args", "ssh", "cache_from", "cache_to", "no_cache", "pull",
	"target", "secrets", "tags", "platforms", "provenance", "sbom"}

// composeFields refuses, in the compose services of the targets, build
// keys imgctl does not build, with their line: some (isolation,
// privileged, entitlements) never reach buildx's target at all.
func (d *Definition) composeFields() []error {
	var errs []error
	services := d.loc.composeServices()
	for _, n := range d.Names() {
		for _, s := range services[n] {
			if s.build.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(s.build.Content); i += 2 {
				k := s.build.Content[i]
				if slices.Contains(composeBuildKeys, k.Value) || strings.HasPrefix(k.Value, "x-") {
					continue
				}
				errs = append(errs, fmt.Errorf("%s:%d: service %q: %w: build.%s (imgctl builds %s)",
					s.file, k.Line, n, ErrUnsupported, k.Value, strings.Join(composeBuildKeys, ", ")))
			}
		}
	}
	return errs
}
