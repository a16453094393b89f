// parse.go holds the command line's shared parsers: lists (comma-separated
// and repeated values), KEY=VALUE flags and tags.

package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/registry"
)

// keyValues parses KEY=VALUE flags; with fromEnv, a bare KEY takes its
// value from the environment (and is left out when unset), as docker does.
func keyValues(flag string, in []string, fromEnv bool) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, s := range in {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if k == "" || (!ok && !fromEnv) {
			return nil, fmt.Errorf("%w: %s %q: want KEY=VALUE", ErrUsage, flag, s)
		}
		if !ok {
			if v, ok = os.LookupEnv(k); !ok {
				continue
			}
		}
		out[k] = v
	}
	return out, nil
}

// splitList splits comma-separated and repeated flag values.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// parseTag parses one tag argument (what names it in messages: "DST",
// "-t/--tag"). With explicit, the tag must be spelled out (promote's DST:
// "app" is not "app:latest" there); otherwise a missing tag means latest,
// as docker and buildx read -t.
func parseTag(parse func(string) (name.Reference, error), what, s string, explicit bool) (name.Tag, error) {
	ref, err := parse(s)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w: %s %q: %w", ErrUsage, what, s, err)
	}
	t, ok := ref.(name.Tag)
	last := s[strings.LastIndex(s, "/")+1:]
	if !ok || (explicit && !strings.Contains(last, ":")) {
		want := "a tag"
		if explicit {
			want = "an explicit tag"
		}
		return name.Tag{}, fmt.Errorf("%w: %s %q: want %s, e.g. %s:1.0", ErrUsage, what, s, want, ref.Context())
	}
	return t, nil
}

// parseTags parses a repeatable -t: at least one tag, all in one
// repository (the children of one index are made present in one
// repository; push to another with imgctl promote), a repeated tag
// counted once. It returns the first tag and the others, in order.
func parseTags(rc *registry.Client, vals []string) (name.Tag, []name.Tag, error) {
	if len(vals) == 0 {
		return name.Tag{}, nil, fmt.Errorf("%w: -t/--tag is required", ErrUsage)
	}
	var tags []name.Tag
	for _, v := range vals {
		t, err := parseTag(rc.ParseReference, "-t/--tag", v, false)
		if err != nil {
			return name.Tag{}, nil, err
		}
		if !slices.ContainsFunc(tags, func(o name.Tag) bool { return o.Name() == t.Name() }) {
			tags = append(tags, t)
		}
	}
	if err := registry.SameRepository(tags); err != nil {
		return name.Tag{}, nil, fmt.Errorf("%w: -t/--tag: %w (copy the index to another repository with imgctl promote)", ErrUsage, err)
	}
	return tags[0], tags[1:], nil
}

// tagStrings spells tags for JSON output.
func tagStrings(tags []name.Tag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.String()
	}
	return out
}
