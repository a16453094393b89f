package bake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/bake"
	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/variant"
)

// write puts files (name → content) in a new directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plan reads the files of dir named in files and plans targets.
func plan(t *testing.T, dir string, files []string, targets []string, overrides ...string) ([]bake.Target, error) {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f))
	}
	d, err := bake.Read(context.Background(), bake.Options{Files: paths, Targets: targets, Overrides: overrides, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, err
	}
	return d.Plan(nil)
}

// TestBadInput: every refusal wraps its sentinel and names the file, and
// the line where the definition has one.
func TestBadInput(t *testing.T) {
	const hcl = `target "ok" {
  tags = ["reg.example.com/ok:1"]
}
`
	for _, tc := range []struct {
		name    string
		files   map[string]string // the first is the -f file; more are read too when listed in also
		also    []string
		targets []string
		set     []string
		want    error
		msg     string // file:line and what
	}{
		{name: "unknown target", files: map[string]string{"docker-bake.hcl": hcl}, targets: []string{"nope"},
			want: bake.ErrUnknownTarget, msg: `docker-bake.hcl: unknown target: no target or group "nope" (targets: ok; groups: none)`},
		{name: "no default", files: map[string]string{"docker-bake.hcl": hcl},
			want: bake.ErrUnknownTarget, msg: `no target or group "default"`},
		{name: "unknown target in a group", files: map[string]string{"docker-bake.hcl": hcl + "group \"all\" {\n  targets = [\"ok\", \"gone\"]\n}\n"},
			targets: []string{"all"}, want: bake.ErrUnknownTarget, msg: `docker-bake.hcl:4: unknown target: group "all" lists "gone"`},
		{name: "unknown inherits", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  inherits = [\"gone\"]\n  tags = [\"r/a:1\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrUnknownTarget, msg: `docker-bake.hcl:2: unknown target: target "a" inherits "gone"`},
		{name: "cycle in inherits", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  inherits = [\"b\"]\n  tags = [\"r/a:1\"]\n}\ntarget \"b\" {\n  inherits = [\"a\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInheritsCycle, msg: `docker-bake.hcl:2: cycle in inherits: target "a": a → b → a`},
		{name: "empty group", files: map[string]string{"docker-bake.hcl": hcl + "group \"none\" {\n  targets = []\n}\n"},
			targets: []string{"none"}, want: bake.ErrEmptyGroup, msg: `docker-bake.hcl:4: empty group: group "none" has no targets`},
		{name: "group of empty groups", files: map[string]string{"docker-bake.hcl": "group \"a\" {\n  targets = [\"b\"]\n}\ngroup \"b\" {\n  targets = []\n}\n"},
			targets: []string{"a"}, want: bake.ErrEmptyGroup, msg: `docker-bake.hcl:1: empty group: group "a"`},
		{name: "malformed platform", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"linux\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidPlatform, msg: `docker-bake.hcl:3: target "a": invalid platform: "linux": want os/arch`},
		{name: "unknown release", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"ltsc2030\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidPlatform, msg: `docker-bake.hcl:3: target "a": invalid platform: "ltsc2030"`},
		{name: "not an LTSC build", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"windows(10.0.19042)/amd64\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidPlatform, msg: `"windows(10.0.19042)/amd64": os.version 10.0.19042 is not of an LTSC release`},
		{name: "Windows arm64 release", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"windows/arm64:10.0.26100\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidPlatform, msg: `imgctl builds Windows variants for amd64, not arm64`},
		{name: "malformed os.version", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"windows/amd64:ten\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidPlatform, msg: `docker-bake.hcl:3: target "a": invalid platform: "windows/amd64:ten"`},
		{name: "one WINDOWS_BASE for two releases", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  platforms = [\"ltsc2022\", \"ltsc2025\"]\n  args = { WINDOWS_BASE = \"r/nanoserver:ltsc2022\" }\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidTarget, msg: `docker-bake.hcl:4: target "a": invalid target: WINDOWS_BASE=r/nanoserver:ltsc2022 names one base for 2 Windows releases`},
		{name: "two targets write one tag", files: map[string]string{"docker-bake.hcl": "group \"default\" {\n  targets = [\"a\", \"b\"]\n}\ntarget \"a\" {\n  tags = [\"r/x:1\"]\n}\ntarget \"b\" {\n  tags = [\"r/x:1\", \"r/x:2\"]\n}\n"},
			want: bake.ErrDuplicateTag, msg: `tag written by two targets: index.docker.io/r/x:1: targets "a" (docker-bake.hcl:4) and "b" (docker-bake.hcl:7)`},
		{name: "no tags", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidTarget, msg: `docker-bake.hcl:1: target "a": invalid target: no tags`},
		{name: "tags in two repositories", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\", \"r/b:1\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidTarget, msg: `docker-bake.hcl:2: target "a": invalid target:`},
		{name: "set on a missing key", files: map[string]string{"docker-bake.hcl": hcl}, targets: []string{"ok"}, set: []string{"ok.tags=r/ok:2", "ok.colour=red"},
			want: bake.ErrInvalidOverride, msg: `docker-bake.hcl: invalid override "ok.colour=red": unknown key: colour`},
		{name: "set on a missing target", files: map[string]string{"docker-bake.hcl": hcl}, targets: []string{"ok"}, set: []string{"gone.tags=r/x:1"},
			want: bake.ErrInvalidOverride, msg: `invalid override "gone.tags=r/x:1": could not find any target matching 'gone'`},
		{name: "HCL syntax", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\n}\n"},
			want: bake.ErrDefinition, msg: `docker-bake.hcl:3`},
		{name: "compose schema", files: map[string]string{"compose.yaml": "services:\n  app:\n    build:\n      context: .\n      cache_from: [type=registry,ref=r/app:cache]\n"},
			want: bake.ErrDefinition, msg: `compose.yaml: invalid bake definition: failed to parse compose file: type required`},
		{name: "output to the docker store", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  output = [\"type=docker\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrUnsupported, msg: `docker-bake.hcl:3: target "a": not supported by imgctl bake: output: type=docker`},
		{name: "manifest annotation", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  annotations = [\"manifest:k=v\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrUnsupported, msg: `imgctl writes index annotations only`},
		{name: "unknown attest type", files: map[string]string{"docker-bake.hcl": "target \"a\" {\n  tags = [\"r/a:1\"]\n  attest = [\"type=vex\"]\n}\n"},
			targets: []string{"a"}, want: bake.ErrInvalidTarget, msg: `docker-bake.hcl:3: target "a": invalid target: attest type "vex"`},
		{name: "compose with unsupported fields", files: map[string]string{"compose.yaml": "services:\n  app:\n    image: r/app:1\n    build:\n      context: .\n      network: host\n      privileged: true\n"},
			want: bake.ErrUnsupported, msg: `compose.yaml:6: service "app": not supported by imgctl bake: build.network`},
		{name: "compose field buildx drops", files: map[string]string{"compose.yaml": "services:\n  app:\n    image: r/app:1\n    build:\n      context: .\n      privileged: true\n"},
			want: bake.ErrUnsupported, msg: `compose.yaml:6: service "app": not supported by imgctl bake: build.privileged`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, tc.files)
			var files []string
			for n := range tc.files {
				files = append(files, n)
			}
			_, err := plan(t, dir, files, tc.targets, tc.set...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); !strings.Contains(got, tc.msg) {
				t.Errorf("error\n%s\nlacks\n%s", got, tc.msg)
			}
		})
	}
}

// TestWindowsPlatforms: each spelling of a Windows release is one
// variant of that release, as build --windows plans it.
func TestWindowsPlatforms(t *testing.T) {
	dir := write(t, map[string]string{"docker-bake.hcl": `
target "app" {
  tags = ["r/app:1"]
  platforms = ["linux/amd64", "windows(10.0.20348)/amd64", "windows/amd64:10.0.26100", "ltsc2022"]
  args = { WINDOWS_BASE = "reg.example.com/nanoserver:{ltsc}", VERSION = "1" }
}
target "plain" {
  tags = ["r/plain:1"]
  platforms = ["linux/arm64", "windows/amd64"]
}
target "releases" {
  tags = ["r/releases:1"]
  platforms = ["ltsc2025", "LTSC2022"]
}
target "default-platforms" {
  tags = ["r/d:1"]
}
target "set-platforms" {
  tags = ["r/s:1"]
}
group "default" {
  targets = ["app", "plain", "releases", "default-platforms", "set-platforms"]
}
`})
	ts, err := plan(t, dir, []string{"docker-bake.hcl"}, nil, "set-platforms.platform=linux/amd64,ltsc2025")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]bake.Target{}
	for _, tt := range ts {
		by[tt.Name] = tt
	}
	variants := func(name string) []string {
		vs, err := variant.PlanVariants(by[name].Variants)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range vs {
			s := v.Name
			for _, p := range v.Platforms {
				s += " " + p.OS + "/" + p.Architecture + ":" + p.OSVersion
			}
			if b := v.BuildArgs[variant.WindowsBaseArg]; b != "" {
				s += " FROM " + b
			}
			out = append(out, s)
		}
		return out
	}
	for name, want := range map[string][]string{
		"app": {"linux linux/amd64:", "ltsc2022 windows/amd64:10.0.20348 FROM reg.example.com/nanoserver:ltsc2022",
			"ltsc2025 windows/amd64:10.0.26100 FROM reg.example.com/nanoserver:ltsc2025"},
		"plain":             {"linux linux/arm64:", "windows windows/amd64:"},
		"releases":          {"ltsc2025 windows/amd64:10.0.26100 FROM mcr.microsoft.com/windows/nanoserver:ltsc2025", "ltsc2022 windows/amd64:10.0.20348 FROM mcr.microsoft.com/windows/nanoserver:ltsc2022"},
		"set-platforms":     {"linux linux/amd64:", "ltsc2025 windows/amd64:10.0.26100 FROM mcr.microsoft.com/windows/nanoserver:ltsc2025"},
		"default-platforms": {"linux linux/amd64: linux/arm64:", "windows windows/amd64:"},
	} {
		if got := variants(name); !slices.Equal(got, want) {
			t.Errorf("%s: variants\n%q\nwant\n%q", name, got, want)
		}
	}
	if got := by["app"].Releases(); !slices.Equal(got, []string{"ltsc2022", "ltsc2025"}) {
		t.Errorf("app releases %v", got)
	}
	if got := by["app"].Variants.BuildArgs; got["VERSION"] != "1" || got[variant.WindowsBaseArg] != "" {
		t.Errorf("app args %v: want VERSION, and WINDOWS_BASE as the template only", got)
	}
	// The same variants as build's flags give them:
	// --platform linux/amd64,windows/amd64 --windows ltsc2022,ltsc2025.
	fromFlags, err := variant.PlanVariants(variant.VariantOptions{
		Platforms:           []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "windows", Architecture: "amd64"}},
		Windows:             []string{"ltsc2022", "ltsc2025"},
		WindowsBaseTemplate: "reg.example.com/nanoserver:{ltsc}",
		BuildArgs:           map[string]string{"VERSION": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fromBake, _ := variant.PlanVariants(by["app"].Variants)
	if len(fromBake) != len(fromFlags) {
		t.Fatalf("%d variants, build's flags plan %d", len(fromBake), len(fromFlags))
	}
	for i := range fromFlags {
		a, b := fromBake[i], fromFlags[i]
		if a.Name != b.Name || a.Release != b.Release || !slices.EqualFunc(a.Platforms, b.Platforms, func(x, y v1.Platform) bool { return x.Equals(y) }) ||
			a.BuildArgs[variant.WindowsBaseArg] != b.BuildArgs[variant.WindowsBaseArg] {
			t.Errorf("variant %d: bake %+v, build %+v", i, a, b)
		}
	}
}

// TestTargetOptions: a target's fields reach build.Options, and the
// attest entries become provenance and SBOM requests.
func TestTargetOptions(t *testing.T) {
	dir := write(t, map[string]string{"docker-bake.hcl": `
target "a" {
  context = "app"
  dockerfile = "build/Dockerfile"
  target = "final"
  tags = ["r/a:1", "r/a:latest"]
  platforms = ["linux/amd64"]
  secret = ["id=tok,env=TOKEN"]
  ssh = ["default"]
  cache-from = ["type=registry,ref=r/a:cache"]
  no-cache = true
  annotations = ["index:org.opencontainers.image.title=a"]
  labels = { "org.opencontainers.image.source" = "https://example.com/a", unset = null }
  attest = ["type=provenance,mode=max,builder-id=https://ci.example.com", "type=sbom,generator=r/scanner:1"]
}
target "b" {
  tags = ["r/b:1"]
  attest = ["type=provenance,disabled=true"]
}
target "c" {
  tags = ["r/c:1"]
}
group "default" {
  targets = ["a", "b", "c"]
}
`})
	ts, err := plan(t, dir, []string{"docker-bake.hcl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := ts[0].Options(build.Options{SyntaxImage: "kept"})
	if o.ContextDir != "app" || o.Dockerfile != filepath.Join("app", "build", "Dockerfile") || o.Target != "final" || o.SyntaxImage != "kept" {
		t.Errorf("context %q, dockerfile %q, target %q, syntax %q", o.ContextDir, o.Dockerfile, o.Target, o.SyntaxImage)
	}
	if o.Tag.String() != "r/a:1" || len(o.AlsoTags) != 1 || o.AlsoTags[0].String() != "r/a:latest" {
		t.Errorf("tags %s %v", o.Tag, o.AlsoTags)
	}
	if len(o.Secrets) != 1 || o.Secrets[0].Env != "TOKEN" || len(o.SSH) != 1 || o.SSH[0].ID != "default" ||
		len(o.CacheFrom) != 1 || o.CacheFrom[0].Attrs["ref"] != "r/a:cache" || !o.NoCache {
		t.Errorf("secrets %+v ssh %+v cache %+v no-cache %v", o.Secrets, o.SSH, o.CacheFrom, o.NoCache)
	}
	if o.Annotations["org.opencontainers.image.title"] != "a" {
		t.Errorf("annotations %v", o.Annotations)
	}
	if len(o.Labels) != 1 || o.Labels["org.opencontainers.image.source"] != "https://example.com/a" {
		t.Errorf("labels %v, want the one set (a null label is unset, as in buildx)", o.Labels)
	}
	if p := o.Provenance; p == nil || p.Mode != build.ProvenanceMax || p.BuilderID != "https://ci.example.com" || o.SBOM == nil || o.SBOM.Generator != "r/scanner:1" {
		t.Errorf("provenance %+v sbom %+v", o.Provenance, o.SBOM)
	}
	if ts[1].Provenance != nil || ts[1].SBOM != nil {
		t.Errorf("b: provenance %+v sbom %+v, want none", ts[1].Provenance, ts[1].SBOM)
	}
	if p := ts[2].Provenance; p == nil || p.Mode != build.ProvenanceMin || ts[2].SBOM != nil {
		t.Errorf("c: provenance %+v sbom %+v, want mode=min as buildx", ts[2].Provenance, ts[2].SBOM)
	}
}

// TestExampleHello: examples/hello/docker-bake.hcl plans two targets from
// its matrix, each with linux/amd64, linux/arm64 and the ltsc2022 and
// ltsc2025 variants FROM their nanoserver, and its Dockerfile passes lint
// (build.Prepare, which reads nothing but the Dockerfile) for each.
func TestExampleHello(t *testing.T) {
	t.Chdir(filepath.Join("..", "examples", "hello"))
	d, err := bake.Read(context.Background(), bake.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := d.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, tt := range ts {
		tags[tt.Name] = tt.Tags[0].String()
		p, err := build.Prepare(tt.Options(build.Options{}))
		if err != nil {
			t.Fatalf("%s: %v", tt.Name, err)
		}
		var got []string
		for _, v := range p.Variants {
			got = append(got, v.Name+" "+v.BuildArgs[variant.WindowsBaseArg])
		}
		want := []string{"linux ", "ltsc2022 mcr.microsoft.com/windows/nanoserver:ltsc2022", "ltsc2025 mcr.microsoft.com/windows/nanoserver:ltsc2025"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: variants %q, want %q", tt.Name, got, want)
		}
	}
	if len(tags) != 2 || tags["hello-release"] != "registry.example.com/hello:dev" || tags["hello-debug"] != "registry.example.com/hello:dev-debug" {
		t.Errorf("targets and tags %v", tags)
	}
}
