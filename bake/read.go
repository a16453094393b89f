package bake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/containerd/platforms"
	bx "github.com/docker/buildx/bake"
	"github.com/docker/buildx/util/urlutil"
)

// Errors of Read and Plan, matched with errors.Is. Each error's text names
// the file, and the line where one is known.
var (
	// ErrNoDefinition: no file given and none of buildx's default names
	// (docker-bake.hcl, compose.yaml, ...) in the working directory.
	ErrNoDefinition = errors.New("no bake definition")
	// ErrDefinition wraps what buildx's parser or evaluator refused (HCL
	// syntax, an unknown function, a compose schema error...).
	ErrDefinition = errors.New("invalid bake definition")
	// ErrUnknownTarget: a target or group named on the command line, in a
	// group or in inherits that no file defines.
	ErrUnknownTarget = errors.New("unknown target")
	// ErrInheritsCycle: a target that inherits from itself, directly or
	// through others. buildx resolves such a target silently, dropping
	// the inherits that close the cycle; imgctl refuses it.
	ErrInheritsCycle = errors.New("cycle in inherits")
	// ErrEmptyGroup: a group that resolves to no target.
	ErrEmptyGroup = errors.New("empty group")
	// ErrInvalidOverride: an override (TARGET.KEY=VALUE) buildx refused: no
	// target matches, an unknown key, a malformed value.
	ErrInvalidOverride = errors.New("invalid override")
	// ErrInvalidPlatform: a platform that is neither os/arch[/variant]
	// nor a Windows LTSC release.
	ErrInvalidPlatform = errors.New("invalid platform")
	// ErrInvalidTarget: a target imgctl cannot publish: no tags, tags in
	// several repositories, a malformed tag or attestation.
	ErrInvalidTarget = errors.New("invalid target")
	// ErrUnsupported: a field imgctl's build does not do (named
	// contexts, outputs other than the registry...).
	ErrUnsupported = errors.New("not supported by imgctl bake")
	// ErrDuplicateTag: two targets write the same tag.
	ErrDuplicateTag = errors.New("tag written by two targets")
)

// DefaultTarget is what runs when no target is named, as in buildx.
const DefaultTarget = "default"

// Options say which files to read and which targets to evaluate.
type Options struct {
	// Files are the definition files, in order; "-" is Stdin. Empty
	// means buildx's default names in the working directory
	// (compose.yaml, compose.yml, docker-compose.yml, docker-compose.yaml,
	// docker-bake.json, docker-bake.hcl and their .override variants).
	Files []string
	// Stdin is read for the file "-".
	Stdin io.Reader
	// Targets are target and group names (glob patterns too, as buildx
	// takes them); empty means DefaultTarget.
	Targets []string
	// Overrides are TARGET.KEY=VALUE overrides in buildx's --set syntax,
	// applied in order.
	Overrides []string
	// FileRelativePaths resolves contexts relative to the file that
	// defines them, as buildx does with BUILDX_BAKE_FILE_RELATIVE_PATHS;
	// otherwise they are relative to the working directory.
	FileRelativePaths bool
	// Getenv reads SOURCE_DATE_EPOCH, which buildx adds to every target's
	// args when set; nil means os.Getenv. HCL variables read the process
	// environment through buildx, as docker buildx bake does.
	Getenv func(string) string
}

// Definition is an evaluated bake definition: the targets and groups the
// command named, resolved by buildx (inherits merged, matrix expanded,
// overrides applied), as docker buildx bake --print shows them.
type Definition struct {
	// Files are the names of the files read, in order.
	Files []string
	// Targets are the resolved targets by name.
	Targets map[string]*bx.Target
	// Groups are the groups that were named or reached, and "default"
	// listing what was named, as buildx reports them.
	Groups map[string]*bx.Group

	loc *locator
}

// Read reads and evaluates the files with buildx's bake package. Before
// buildx resolves the targets it checks what buildx lets pass or reports
// without a file: every name resolves to a target or a non-empty group,
// and no target inherits from itself.
func Read(ctx context.Context, o Options) (*Definition, error) {
	files, err := bx.ReadLocalFiles(o.Files, o.Stdin, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDefinition, err)
	}
	if len(files) == 0 {
		wd, _ := os.Getwd()
		return nil, fmt.Errorf("%w: none of docker-bake.hcl, docker-bake.json, compose.yaml, docker-compose.yml (buildx's default names) in %s", ErrNoDefinition, wd)
	}
	d := &Definition{}
	for _, f := range files {
		d.Files = append(d.Files, f.Name)
	}
	defaults := map[string]string{
		"BAKE_CMD_CONTEXT":    "cwd://",
		"BAKE_LOCAL_PLATFORM": platforms.Format(platforms.DefaultSpec()),
	}
	popt := bx.ParseOpt{FileRelativePaths: o.FileRelativePaths}
	cfg, _, err := bx.ParseFiles(files, defaults, nil, popt)
	if err != nil {
		return nil, d.definitionError(err)
	}
	d.loc = newLocator(files, cfg)
	names := o.Targets
	if len(names) == 0 {
		names = []string{DefaultTarget}
	}
	if err := d.check(cfg, names); err != nil {
		return nil, err
	}
	read := func(overrides []string) (map[string]*bx.Target, map[string]*bx.Group, error) {
		return bx.ReadTargets(ctx, files, slices.Clone(names), overrides, defaults, nil, &bx.EntitlementConf{}, popt)
	}
	d.Targets, d.Groups, err = read(o.Overrides)
	if err != nil {
		// buildx's error does not say which override it is about: find
		// the first that fails alone.
		for _, ov := range o.Overrides {
			if _, _, err1 := read([]string{ov}); err1 != nil {
				return nil, fmt.Errorf("%s: %w %q: %w", d.where(), ErrInvalidOverride, ov, err1)
			}
		}
		return nil, d.definitionError(err)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, t := range d.Targets {
		finish(t, getenv)
	}
	return d, nil
}

// finish does to a resolved target what buildx does before it prints or
// builds it (commands/bake.go, bake.toBuildOpt): SOURCE_DATE_EPOCH from
// the environment among the args, and the context cleaned, a cwd://
// prefix dropped.
func finish(t *bx.Target, getenv func(string) string) {
	if _, ok := t.Args["SOURCE_DATE_EPOCH"]; !ok {
		if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
			if t.Args == nil {
				t.Args = map[string]*string{}
			}
			t.Args["SOURCE_DATE_EPOCH"] = &v
		}
	}
	c := "."
	if t.Context != nil {
		c = *t.Context
	}
	if !strings.HasPrefix(c, "cwd://") && !urlutil.IsRemoteURL(c) {
		c = path.Clean(c)
	}
	if v, ok := strings.CutPrefix(c, "cwd://"); ok {
		c = path.Clean(v)
	}
	t.Context = &c
}

// Print is the definition as docker buildx bake --print prints it:
// indented by two spaces, with a trailing newline.
func (d *Definition) Print() ([]byte, error) {
	dt, err := json.MarshalIndent(d.printed(), "", "  ")
	return append(dt, '\n'), err
}

func (d *Definition) printed() any {
	return struct {
		Group  map[string]*bx.Group  `json:"group,omitempty"`
		Target map[string]*bx.Target `json:"target"`
	}{d.Groups, d.Targets}
}

// Names are the targets' names, sorted.
func (d *Definition) Names() []string {
	names := make([]string, 0, len(d.Targets))
	for n := range d.Targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// definitionError wraps an error of buildx's parser or evaluator in
// ErrDefinition, naming the files read unless it names one (HCL errors
// come with FILE:LINE; compose errors name none).
func (d *Definition) definitionError(err error) error {
	if slices.ContainsFunc(d.Files, func(f string) bool { return strings.Contains(err.Error(), f) }) {
		return fmt.Errorf("%w: %w", ErrDefinition, err)
	}
	return fmt.Errorf("%s: %w: %w", d.where(), ErrDefinition, err)
}

// where names the files read, for errors about no line in particular.
func (d *Definition) where() string { return strings.Join(d.Files, ", ") }

// check refuses, before buildx resolves anything, a name that is neither
// a target nor a group, a group that resolves to no target, and a target
// that inherits from itself: buildx reports the first without a file,
// and lets the other two pass.
func (d *Definition) check(cfg *bx.Config, names []string) error {
	groups := map[string]*bx.Group{}
	for _, g := range cfg.Groups {
		groups[g.Name] = g
	}
	targets := map[string]*bx.Target{}
	for _, t := range cfg.Targets {
		targets[t.Name] = t
	}
	known := func() string {
		var ts, gs []string
		for n := range targets {
			ts = append(ts, n)
		}
		for n := range groups {
			gs = append(gs, n)
		}
		sort.Strings(ts)
		sort.Strings(gs)
		return fmt.Sprintf("targets: %s; groups: %s", orNone(ts), orNone(gs))
	}
	c := &checker{d: d, groups: groups, targets: targets, seenGroup: map[string]bool{}, doneTarget: map[string]bool{}}
	var errs []error
	for _, n := range names {
		n = strings.ReplaceAll(n, ".", "_") // buildx's sanitizeTargetName
		if strings.ContainsAny(n, "*?[]") {
			if !slices.ContainsFunc(append(slices.Collect(maps.Keys(groups)), slices.Collect(maps.Keys(targets))...), func(s string) bool {
				ok, err := path.Match(n, s)
				return ok && err == nil
			}) {
				errs = append(errs, fmt.Errorf("%s: %w: no target or group matches %q (%s)", d.where(), ErrUnknownTarget, n, known()))
			}
			continue
		}
		if err := c.resolve(n, ""); err != nil {
			if errors.Is(err, ErrUnknownTarget) && groups[n] == nil && targets[n] == nil {
				err = fmt.Errorf("%w (%s)", err, known())
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checker walks groups and inherits for Definition.check.
type checker struct {
	d          *Definition
	groups     map[string]*bx.Group
	targets    map[string]*bx.Target
	seenGroup  map[string]bool
	doneTarget map[string]bool
}

// resolve checks name, reached from the group from ("" for the command
// line).
func (c *checker) resolve(name, from string) error {
	if g, ok := c.groups[name]; ok {
		if c.seenGroup[name] {
			return nil
		}
		c.seenGroup[name] = true
		if c.leaves(name, map[string]bool{}) == 0 {
			return fmt.Errorf("%s: %w: group %q has no targets", c.d.loc.group(name), ErrEmptyGroup, name)
		}
		var errs []error
		for _, t := range g.Targets {
			errs = append(errs, c.resolve(t, name))
		}
		return errors.Join(errs...)
	}
	if _, ok := c.targets[name]; ok {
		return c.inherits(name, nil)
	}
	if from != "" {
		return fmt.Errorf("%s: %w: group %q lists %q, which no file defines", c.d.loc.group(from), ErrUnknownTarget, from, name)
	}
	return fmt.Errorf("%s: %w: no target or group %q", c.d.where(), ErrUnknownTarget, name)
}

// leaves counts the targets group name reaches.
func (c *checker) leaves(name string, seen map[string]bool) int {
	if seen[name] {
		return 0
	}
	seen[name] = true
	g, ok := c.groups[name]
	if !ok {
		return 1
	}
	n := 0
	for _, t := range g.Targets {
		n += c.leaves(t, seen)
	}
	return n
}

// inherits walks target name's inherits depth first; stack is the chain
// that reached it.
func (c *checker) inherits(name string, stack []string) error {
	if i := slices.Index(stack, name); i >= 0 {
		chain := append(slices.Clone(stack[i:]), name)
		return fmt.Errorf("%s: %w: target %q: %s", c.d.loc.attr(stack[i], "inherits"), ErrInheritsCycle, stack[i], strings.Join(chain, " → "))
	}
	if c.doneTarget[name] {
		return nil
	}
	t, ok := c.targets[name]
	if !ok {
		parent := stack[len(stack)-1]
		return fmt.Errorf("%s: %w: target %q inherits %q, which no file defines", c.d.loc.attr(parent, "inherits"), ErrUnknownTarget, parent, name)
	}
	stack = append(stack, name)
	for _, p := range slices.Compact(slices.Clone(t.Inherits)) {
		if err := c.inherits(p, stack); err != nil {
			return err
		}
	}
	c.doneTarget[name] = true
	return nil
}
