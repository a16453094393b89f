package build

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/containerd/platforms"
	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	digest "github.com/opencontainers/go-digest"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
)

// baseQuery is one final base to resolve: a variant's base for one of its
// platforms, on the daemon that builds the variant.
type baseQuery struct {
	variant int
	fb      lint.FinalBase
	ref     name.Reference  // fb.Name as the registry client reads it
	named   reference.Named // fb.Name as BuildKit normalises it
	plat    v1.Platform     // the platform the builder resolves it for
	release uint32          // the variant's Windows build; 0 for none
}

// key identifies the queries that one resolution answers on a daemon.
func (q baseQuery) key() string {
	return fmt.Sprintf("%s|%s|%d|%t", q.named, platforms.FormatAll(platform.ToSpec(q.plat)), q.release, onTarget(q.fb))
}

// resolveBases pins the final base of every platform of every variant the
// way the builder will pull it: through the resolver of the daemon that
// builds the variant (its registry mirrors, TLS and plain-HTTP settings),
// with registry credentials from the client session. On each daemon one
// internal gateway build (not recorded in its build history) asks
// ResolveImageConfig for every distinct base and platform (see
// resolveAll); the daemons are asked concurrently. Then every Windows
// base's os.version is checked against its variant's release
// (checkRelease), in variant order, before anything is solved.
func (r *run) resolveBases(ctx context.Context) error {
	p, conns, rc := r.p, r.conns, r.rc
	p.resolved = map[string]ResolvedBase{}
	var daemons []*client.Client
	queries := map[*client.Client][]baseQuery{}
	for i, fbs := range p.Bases {
		for _, fb := range fbs {
			if fb.Name == "" {
				continue
			}
			q, err := newBaseQuery(i, fb, p.Variants[i], rc)
			if err != nil {
				return err
			}
			c := conns.clients[i]
			if _, ok := queries[c]; !ok {
				daemons = append(daemons, c)
			}
			queries[c] = append(queries[c], q)
		}
	}
	var mu sync.Mutex
	var g errgroup.Group // no shared cancellation: nothing is left in flight when this returns
	for _, c := range daemons {
		qs := queries[c]
		a := p.Assignments[qs[0].variant]
		label := ""
		if conns.several {
			label = a.Label
		}
		g.Go(func() error {
			rbs, err := r.resolveOn(ctx, c, a.Builder.Addr, qs, label)
			mu.Lock()
			defer mu.Unlock()
			for j, q := range qs {
				if rbs[j] != nil {
					p.resolved[resolvedKey(q.variant, q.fb)] = *rbs[j]
				}
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, fbs := range p.Bases {
		for _, fb := range fbs {
			if rb, ok := p.resolved[resolvedKey(i, fb)]; ok {
				if err := checkRelease(p.Variants[i], fb, rb); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func newBaseQuery(i int, fb lint.FinalBase, v variant.Variant, rc *registry.Client) (baseQuery, error) {
	ref, err := rc.ParseReference(fb.Name)
	if err == nil {
		var named reference.Named
		if named, err = reference.ParseNormalizedNamed(fb.Name); err == nil {
			return baseQuery{variant: i, fb: fb, ref: ref, named: named, plat: platform.Normalize(fb.StagePlatform), release: v.Release.Build}, nil
		}
	}
	return baseQuery{}, fmt.Errorf("base of stage %s (line %d): %w", fb.Stage, fb.Line, err)
}

// resolveOn answers qs on daemon c (at addr) in one internal gateway
// build whose status goes to o.Status (under label when label is set). It
// returns what it resolved, in query order, and the first error in query
// order. Errors are kept on this side rather than returned through the
// build function and the daemon, so that their sentinels survive.
func (r *run) resolveOn(ctx context.Context, c *client.Client, addr string, qs []baseQuery, label string) ([]*ResolvedBase, error) {
	o := r.o
	att, err := attachables(nil, nil, o.Stderr) // registry auth only
	if err != nil {
		return nil, err
	}
	out := make([]*ResolvedBase, len(qs))
	errs := make([]error, len(qs))
	var fwd sync.WaitGroup
	ch := StatusTo(ctx, &fwd, o.Status, label)
	_, err = c.Build(ctx, client.SolveOpt{Session: att, Internal: true}, "imgctl", func(ctx context.Context, gw gateway.Client) (*gateway.Result, error) {
		br := &baseResolver{gw: gw, daemon: c, rc: r.rc, note: o.note}
		br.resolveAll(ctx, qs, out, errs)
		return gateway.NewResult(), nil
	}, ch)
	fwd.Wait()
	for j, e := range errs {
		if e != nil {
			return out, fmt.Errorf("resolving base %s for %s on %s: %w", qs[j].fb.Name, platform.Format(qs[j].plat), addr, e)
		}
	}
	if err != nil {
		return out, fmt.Errorf("resolving bases on %s: %w", addr, err)
	}
	return out, nil
}

// baseResolver resolves bases inside one gateway build on one daemon.
type baseResolver struct {
	gw     gateway.Client
	daemon *client.Client
	rc     *registry.Client
	note   func(string)
}

// resolveAll answers qs into out and errs, once per distinct query. The
// queries of one reference run one after the other, the first by its tag
// and the others by the digest that returned: every platform is pinned to
// the same index even if the tag moves meanwhile, and the registry sees
// one lookup of the tag. Different references resolve concurrently.
func (r *baseResolver) resolveAll(ctx context.Context, qs []baseQuery, out []*ResolvedBase, errs []error) {
	first := map[string]int{}
	byRef := map[string][]int{}
	var refs []string
	for j, q := range qs {
		if _, ok := first[q.key()]; ok {
			continue
		}
		first[q.key()] = j
		n := q.named.String()
		if _, ok := byRef[n]; !ok {
			refs = append(refs, n)
		}
		byRef[n] = append(byRef[n], j)
	}
	var wg sync.WaitGroup
	for _, n := range refs {
		wg.Go(func() {
			var top v1.Hash
			for _, j := range byRef[n] {
				out[j], errs[j] = r.resolve(ctx, qs[j], top)
				if errs[j] == nil && top == (v1.Hash{}) {
					top = out[j].top
				}
			}
		})
	}
	wg.Wait()
	for j, q := range qs {
		if k := first[q.key()]; k != j {
			out[j], errs[j] = out[k], errs[k]
		}
	}
}

// resolve asks the builder for q's base: the digest the reference points
// at (given as top, when another platform's resolution returned it) and
// the config of the image its platform match takes for q.plat. A Windows
// base of another build than the variant's release is looked up once more
// by build (resolveChild); checkRelease judges the outcome.
func (r *baseResolver) resolve(ctx context.Context, q baseQuery, top v1.Hash) (*ResolvedBase, error) {
	ref := reference.TagNameOnly(q.named).String()
	if top != (v1.Hash{}) {
		var err error
		if ref, err = pinned(q.named, top); err != nil {
			return nil, err
		}
	}
	top, osVersion, err := r.config(ctx, ref, q.plat)
	if err != nil {
		return nil, err
	}
	rb := &ResolvedBase{Name: q.ref.Name(), Digest: top, OSVersion: osVersion, top: top}
	if q.release != 0 && q.plat.OS == "windows" {
		if b, ok := platform.Build(osVersion); !ok || b != q.release {
			if err := r.resolveChild(ctx, q, rb); err != nil {
				return nil, err
			}
		}
	}
	rb.plat = q.plat
	if q.plat.OS == "windows" && onTarget(q.fb) {
		rb.plat.OSVersion = rb.OSVersion // what the solve asks for: see Plan.solvePlatforms
	}
	return rb, nil
}

// config is one ResolveImageConfig of ref for plat: the digest ref points
// at and the os.version of the image config the builder's platform match
// took.
func (r *baseResolver) config(ctx context.Context, ref string, plat v1.Platform) (v1.Hash, string, error) {
	sp := platforms.Normalize(platform.ToSpec(plat))
	_, dgst, dt, err := r.gw.ResolveImageConfig(ctx, ref, sourceresolver.Opt{
		LogName:  fmt.Sprintf("[imgctl] resolve base %s for %s", ref, platforms.FormatAll(sp)),
		ImageOpt: &sourceresolver.ResolveImageOpt{Platform: &sp},
	})
	if err != nil {
		if strings.Contains(err.Error(), "no match for platform") {
			return v1.Hash{}, "", fmt.Errorf("%w: %w", ErrBaseNotFound, err)
		}
		return v1.Hash{}, "", err
	}
	top, err := v1.NewHash(dgst.String())
	if err != nil {
		return v1.Hash{}, "", fmt.Errorf("digest of %s: %w", ref, err)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(dt))
	if err != nil {
		return v1.Hash{}, "", fmt.Errorf("config of %s: %w", ref, err)
	}
	return top, cf.OSVersion, nil
}

// resolveChild handles a Windows base whose image, as the builder's
// platform match takes it, is of another build than the release's. With
// several builds in one index, containerd's matcher (in BuildKit too)
// accepts for a 26100 host every build from 20348 to 26100 and keeps the
// first in index order, which for Microsoft's multi-build lists is the
// oldest. The builder cannot be asked for a build: so imgctl reads the
// index the builder resolved, picks the child of the release's build and
// has the builder resolve that child by digest. The base is then pinned to
// the child (rb.Digest). When the base has no image of the build, rb stays
// as the builder resolved it and checkRelease refuses it.
func (r *baseResolver) resolveChild(ctx context.Context, q baseQuery, rb *ResolvedBase) error {
	raw, err := r.readIndex(ctx, q, rb)
	if err != nil {
		return err
	}
	want := q.plat
	want.OSVersion = fmt.Sprintf("10.0.%d", q.release)
	child, ok, err := content.ChildOf(raw, want)
	if err != nil || !ok {
		return err
	}
	ref, err := pinned(q.named, child.Digest)
	if err != nil {
		return err
	}
	_, osVersion, err := r.config(ctx, ref, want)
	if err != nil {
		return err
	}
	rb.Digest, rb.OSVersion = child.Digest, osVersion
	return nil
}

// readIndex reads the manifest that q's reference pointed at: from the
// daemon's content store, where the builder's resolver put it (read by
// digest and checked), else from the registry directly, with a note.
func (r *baseResolver) readIndex(ctx context.Context, q baseQuery, rb *ResolvedBase) ([]byte, error) {
	if raw, err := content.ReadBlob(ctx, r.daemon.ContentClient(), rb.top, 0); err == nil {
		return raw, nil
	}
	r.note(fmt.Sprintf("reading base %s@%s from its registry directly, not through the builder: for %s the builder takes an image of os.version %q from it, and to look for one of build %d imgctl needs the index, which the builder does not hold",
		q.ref.Context(), rb.top, platform.Format(q.plat), rb.OSVersion, q.release))
	desc, err := r.rc.Get(ctx, q.ref.Context().Digest(rb.top.String()))
	if err != nil {
		return nil, fmt.Errorf("reading %s@%s: %w", q.ref.Context(), rb.top, err)
	}
	return desc.Manifest, nil
}

// pinned is named's repository at digest h, as BuildKit spells it.
func pinned(named reference.Named, h v1.Hash) (string, error) {
	ref, err := reference.WithDigest(reference.TrimNamed(named), digest.Digest(h.String()))
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

// baseRepos are the repositories of the final bases, for the session's
// pull scopes: imgctl reads a base from its registry only when the builder
// cannot give what it needs (see baseResolver.readIndex), and then within
// the command's one handshake per registry.
func (p *Plan) baseRepos(rc *registry.Client) []name.Repository {
	var out []name.Repository
	for _, fbs := range p.Bases {
		for _, fb := range fbs {
			if ref, err := rc.ParseReference(fb.Name); err == nil && fb.Name != "" {
				out = append(out, ref.Context())
			}
		}
	}
	return out
}

// resolvedKey keys p.resolved: variant i's base fb.
func resolvedKey(i int, fb lint.FinalBase) string {
	return fmt.Sprintf("%d|%s|%s", i, fb.Name, platform.Key(fb.StagePlatform))
}

// resolvedFor returns variant i's resolved bases by platform.Key of the
// target platform.
func (p *Plan) resolvedFor(i int) map[string]ResolvedBase {
	out := map[string]ResolvedBase{}
	for _, fb := range p.Bases[i] {
		if rb, ok := p.resolved[resolvedKey(i, fb)]; ok && fb.Name != "" {
			out[platform.Key(fb.Platform)] = rb
		}
	}
	return out
}

// onTarget reports whether fb's stage builds on the target platform rather
// than on a FROM --platform of its own.
func onTarget(fb lint.FinalBase) bool {
	return platform.Key(fb.StagePlatform) == platform.Key(fb.Platform)
}
