package lint

import (
	"fmt"
	"slices"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// argEnv is an ordered set of variables; it implements shell.EnvGetter.
type argEnv struct {
	keys   []string
	values map[string]string
}

var _ shell.EnvGetter = (*argEnv)(nil)

// Get returns the value of variable k.
func (e *argEnv) Get(k string) (string, bool) {
	v, ok := e.values[k]
	return v, ok
}

// Keys returns the variable names in the order they were first set.
func (e *argEnv) Keys() []string { return slices.Clone(e.keys) }

func (e *argEnv) set(k, v string) {
	if _, ok := e.values[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.values[k] = v
}

// globalArgs builds the scope FROM lines are expanded in, like dockerfile2llb's
// defaultArgs and buildMetaArgs: the automatic platform ARGs, then the ARGs
// before the first FROM, with build args taking precedence.
func globalArgs(lex *shell.Lex, metaArgs []instructions.ArgCommand, tp ocispecs.Platform, targetName string, opts Options) (*argEnv, error) {
	bp := ocispecs.Platform{OS: buildPlatform.OS, Architecture: buildPlatform.Architecture}
	env := &argEnv{values: map[string]string{}}
	for _, kv := range [...][2]string{
		{"BUILDPLATFORM", platforms.Format(bp)},
		{"BUILDOS", bp.OS},
		{"BUILDOSVERSION", bp.OSVersion},
		{"BUILDARCH", bp.Architecture},
		{"BUILDVARIANT", bp.Variant},
		{"TARGETPLATFORM", platforms.FormatAll(tp)},
		{"TARGETOS", tp.OS},
		{"TARGETOSVERSION", tp.OSVersion},
		{"TARGETARCH", tp.Architecture},
		{"TARGETVARIANT", tp.Variant},
		{"TARGETSTAGE", targetName},
	} {
		v := kv[1]
		if ov, ok := opts.BuildArgs[kv[0]]; ok {
			v = ov
		}
		env.set(kv[0], v)
	}
	for _, cmd := range metaArgs {
		for _, kp := range cmd.Args {
			if v, ok := opts.BuildArgs[kp.Key]; ok {
				env.set(kp.Key, v)
				continue
			}
			if kp.Value == nil {
				continue
			}
			v, _, err := lex.ProcessWord(*kp.Value, env)
			if err != nil {
				return nil, fmt.Errorf("line %d: expanding ARG %s: %w", startLine(cmd.Location()), kp.Key, err)
			}
			env.set(kp.Key, v)
		}
	}
	return env, nil
}

// targetStage is the value of TARGETSTAGE: --target, else the last stage's name.
func targetStage(sts []instructions.Stage, opts Options) string {
	if opts.Target != "" {
		return opts.Target
	}
	if name := sts[len(sts)-1].Name; name != "" {
		return name
	}
	return "default"
}
