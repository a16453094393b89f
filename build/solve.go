package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/tonistiigi/fsutil"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/graft"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// Frontends Build uses.
const (
	FrontendDockerfile = "dockerfile.v0"
	FrontendGateway    = "gateway.v0"
)

// solveAll runs one Solve per variant concurrently, each on its daemon
// after pre-mounting its bases' layers into the tag's repository
// (premount), and returns what each pushed (read back from its daemon, see
// content.Daemon), in variant order. It fans the
// status of every solve into o.Status; with several daemons, each one's
// vertices carry its label (see relabel).
func (r *run) solveAll(ctx context.Context) ([]*content.Exported, error) {
	p, o, conns := r.p, r.o, r.conns
	out := make([]*content.Exported, len(p.Variants))
	repo := o.Tag.Context()
	g, gctx := errgroup.WithContext(ctx)
	var fwd sync.WaitGroup
	for i, v := range p.Variants {
		c, a := conns.clients[i], p.Assignments[i]
		label := ""
		if conns.several {
			label = a.Label
		}
		ch := StatusTo(ctx, &fwd, o.Status, label)
		g.Go(func() error {
			opt, err := r.solveOpt(i)
			if err != nil {
				close(ch)
				return err
			}
			bases := r.premount(gctx, i, c)
			gr, err := r.graftOrPlain(gctx, i, c)
			if err != nil {
				close(ch)
				return fmt.Errorf("building %s: pushing the placeholder of its base: %w", v.Name, err)
			}
			plainAttrs := maps.Clone(opt.FrontendAttrs)
			if gr != nil {
				gr.Pins(opt.FrontendAttrs)
			}
			o.logger().Info("solving", "variant", v.Name, "platforms", formatPlatforms(v.Platforms), "builder", a.Builder.Addr)
			src := content.NewDaemon(c.ContentClient(), repo, r.rc)
			ex, err := p.solveOne(gctx, c, opt, ch, src)
			if gr != nil {
				if err == nil {
					ex.Prepared, err = gr.Apply(gctx, src, ex, repo, bases)
				}
				// A graft that went wrong (a frontend that ignored the pin, a
				// builder that cannot pull the placeholder) is built again
				// on the plain path, and the note says why.
				if err != nil && gctx.Err() == nil && (errors.Is(err, graft.ErrGraft) || gr.NamesPlaceholder(err)) {
					o.note(fmt.Sprintf("variant %s: BuildKit's plain path, which downloads the base: the graft failed: %v", v.Name, err))
					opt.FrontendAttrs = plainAttrs
					ex, err = p.solveOne(gctx, c, opt, StatusTo(ctx, &fwd, o.Status, label), src)
				}
			}
			if err == nil {
				err = r.windowsSBOM(gctx, i, c, src, ex, gr)
			}
			if err != nil {
				return fmt.Errorf("building %s: %w", v.Name, err)
			}
			out[i] = ex
			r.premounts.CheckBaseLayers(v.Name, out[i], bases)
			return nil
		})
	}
	err := g.Wait()
	fwd.Wait()
	return out, err
}

// solveOne runs one solve with its status on ch and reads what it pushed.
func (p *Plan) solveOne(ctx context.Context, c *client.Client, opt client.SolveOpt, ch chan *client.SolveStatus, src content.BlobSource) (*content.Exported, error) {
	resp, err := c.Solve(ctx, nil, opt, ch)
	if err != nil {
		return nil, err
	}
	top, err := content.TopDescriptor(resp.ExporterResponse)
	if err != nil {
		return nil, err
	}
	return content.ReadExported(ctx, src, top, !p.tagsDirectly())
}

// solveOpt is the SolveOpt of variant i.
func (r *run) solveOpt(i int) (client.SolveOpt, error) {
	p, o, dfDir := r.p, r.o, r.dfDir
	v := p.Variants[i]
	ctxFS, err := fsutil.NewFS(p.contextDir)
	if err != nil {
		return client.SolveOpt{}, fmt.Errorf("build context %s: %w", p.contextDir, err)
	}
	dfFS, err := fsutil.NewFS(dfDir)
	if err != nil {
		return client.SolveOpt{}, fmt.Errorf("Dockerfile directory %s: %w", dfDir, err)
	}
	att, err := attachables(o.Secrets, o.SSH, o.Stderr)
	if err != nil {
		return client.SolveOpt{}, err
	}
	several := len(p.Variants) > 1
	return client.SolveOpt{
		Frontend:      p.frontend(),
		FrontendAttrs: r.frontendAttrs(i),
		LocalMounts:   map[string]fsutil.FS{"context": ctxFS, "dockerfile": dfFS},
		Session:       att,
		CacheImports:  cacheForVariant(o.CacheFrom, v.Name, several),
		CacheExports:  cacheForVariant(o.CacheTo, v.Name, several),
		Exports: []client.ExportEntry{{
			Type:  client.ExporterImage,
			Attrs: exportAttrs(o, v, p.resolvedFor(i), p.tagsDirectly()),
		}},
	}, nil
}

func (p *Plan) frontend() string {
	if p.syntaxImage != "" {
		return FrontendGateway
	}
	return FrontendDockerfile
}

// frontendAttrs are the Dockerfile frontend's attributes of variant i's
// solve: the base pins, the platforms, the build args, the labels and the
// attestations.
func (r *run) frontendAttrs(i int) map[string]string {
	p, o := r.p, r.o
	v := p.Variants[i]
	attrs := p.pins(i)
	maps.Copy(attrs, map[string]string{
		"filename": filepath.Base(p.File),
		"platform": formatPlatforms(p.solvePlatforms(i)),
	})
	if p.syntaxImage != "" {
		attrs["source"] = p.syntaxImage
	}
	if o.Target != "" {
		attrs["target"] = o.Target
	}
	if o.NoCache {
		attrs["no-cache"] = ""
	}
	for k, val := range v.BuildArgs {
		attrs["build-arg:"+k] = val
	}
	for k, val := range o.Labels {
		attrs["label:"+k] = val
	}
	maps.Copy(attrs, attestAttrs(o))
	return attrs
}

// exportAttrs pushes the result by digest into the tag's repository with
// the base annotations of each platform; with tag, to the tag itself with
// the index annotations too (see Plan.tagsDirectly).
func exportAttrs(o *Options, v variant.Variant, bases map[string]ResolvedBase, tag bool) map[string]string {
	attrs := map[string]string{
		string(exptypes.OptKeyName):         o.Tag.Context().Name(),
		string(exptypes.OptKeyPush):         "true",
		string(exptypes.OptKeyPushByDigest): "true",
		string(exptypes.OptKeyOCITypes):     "true",
	}
	if tag {
		attrs[string(exptypes.OptKeyName)] = o.Tag.Name()
		delete(attrs, string(exptypes.OptKeyPushByDigest))
		for k, val := range o.Annotations {
			attrs[exptypes.AnnotationIndexKey(k)] = val
		}
	}
	if o.registry().Insecure() {
		attrs[string(exptypes.OptKeyInsecure)] = "true"
	}
	for k, val := range BaseAnnotationAttrs(v.Platforms, bases) {
		attrs[k] = val
	}
	return attrs
}

// BaseAnnotationAttrs returns the image exporter attributes that set the
// base annotations on each platform's manifest. bases are keyed by
// platform.Key of the target platform. With one platform the keys carry no
// platform (BuildKit's annotation-manifest[PLATFORM] accepts no os.version).
func BaseAnnotationAttrs(plats []v1.Platform, bases map[string]ResolvedBase) map[string]string {
	attrs := map[string]string{}
	for _, p := range plats {
		b, ok := bases[platform.Key(p)]
		if !ok {
			continue
		}
		var sp *ocispecs.Platform
		if len(plats) > 1 {
			n := platforms.Normalize(platform.ToSpec(p))
			sp = &n
		}
		attrs[exptypes.AnnotationManifestKey(sp, snapshot.AnnotationBaseName)] = b.Name
		attrs[exptypes.AnnotationManifestKey(sp, snapshot.AnnotationBaseDigest)] = b.Digest.String()
	}
	return attrs
}

// formatPlatforms writes platforms the way BuildKit's platform attribute
// reads them: windows(10.0.20348)/amd64 when there is an os.version.
func formatPlatforms(ps []v1.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = platforms.FormatAll(platforms.Normalize(platform.ToSpec(p)))
	}
	return strings.Join(s, ",")
}

// dockerfileDir returns the directory to mount as the Dockerfile: the
// Dockerfile's own, or a temporary copy with the # syntax= line blanked
// when the built-in frontend builds it.
func (p *Plan) dockerfileDir() (string, func(), error) {
	dir := filepath.Dir(p.File)
	stripped, _, found := StripSyntax(p.Dockerfile)
	if p.syntaxImage != "" || !found {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "imgctl-dockerfile-")
	if err != nil {
		return "", nil, fmt.Errorf("copying Dockerfile: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	base := filepath.Base(p.File)
	err = os.WriteFile(filepath.Join(tmp, base), stripped, 0o644)
	if ignore, rerr := os.ReadFile(p.File + ".dockerignore"); err == nil && rerr == nil {
		err = os.WriteFile(filepath.Join(tmp, base+".dockerignore"), ignore, 0o644)
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying Dockerfile: %w", err)
	}
	return tmp, cleanup, nil
}
