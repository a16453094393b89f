package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

// DefaultSuffix is what a tag that is not a semantic version gets, with a
// number: latest becomes latest-r1, latest-r1 becomes latest-r2.
const DefaultSuffix = "-r"

// maxTagLen is the longest tag the distribution spec allows.
const maxTagLen = 128

// ErrTagRule is returned for a tag rule that cannot name a valid tag.
var ErrTagRule = errors.New("invalid tag rule")

// semverTag is MAJOR.MINOR.PATCH with an optional v, and nothing after:
// a pre-release or build suffix is not a release to patch.
var semverTag = regexp.MustCompile(`^(v?)(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// validTag is the distribution spec's tag grammar.
var validTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// TagRule names the new release tag of a source tag. Its candidates are
// numbered from 1: the new tag is the first candidate not taken, and an
// earlier promotion is looked for among the taken ones before it.
//   - A semantic version MAJOR.MINOR.PATCH (with an optional v) gives the
//     next patch versions: 1.4.2 → 1.4.3, 1.4.4, …
//   - Any other tag gets Suffix and a number: latest → latest-r1, latest-r2,
//     …; a tag that already ends in Suffix and a number counts on from it
//     (latest-r1 → latest-r2), so that a patched tag patches on.
//   - Template, when set, replaces both: a Go text/template with .Tag (the
//     source tag) and .N (the candidate's number), e.g. "{{.Tag}}-patch{{.N}}".
type TagRule struct {
	Suffix   string
	Template string
	tmpl     *template.Template
}

// NewTagRule checks a rule: suffix "" means DefaultSuffix; a template must
// parse and use .N, or every candidate would be the same tag.
func NewTagRule(suffix, tmpl string) (*TagRule, error) {
	r := &TagRule{Suffix: suffix, Template: tmpl}
	if r.Suffix == "" {
		r.Suffix = DefaultSuffix
	}
	if !validTag.MatchString("x" + r.Suffix + "1") {
		return nil, fmt.Errorf("%w: suffix %q makes invalid tags", ErrTagRule, suffix)
	}
	if tmpl == "" {
		return r, nil
	}
	t, err := template.New("tag").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return nil, fmt.Errorf("%w: template: %w", ErrTagRule, err)
	}
	r.tmpl = t
	a, err := r.Candidate("x", 1)
	if err != nil {
		return nil, err
	}
	if b, err := r.Candidate("x", 2); err != nil || a == b {
		return nil, fmt.Errorf("%w: template %q must use {{.N}}", ErrTagRule, tmpl)
	}
	return r, nil
}

// Candidate returns the n-th candidate (from 1) for the new tag of tag.
func (r *TagRule) Candidate(tag string, n int) (string, error) {
	var out string
	switch {
	case r.tmpl != nil:
		var b bytes.Buffer
		if err := r.tmpl.Execute(&b, struct {
			Tag string
			N   int
		}{tag, n}); err != nil {
			return "", fmt.Errorf("%w: template: %w", ErrTagRule, err)
		}
		out = b.String()
	case semverTag.MatchString(tag):
		m := semverTag.FindStringSubmatch(tag)
		patch, err := strconv.Atoi(m[4])
		if err != nil {
			return "", fmt.Errorf("%w: %q: %w", ErrTagRule, tag, err)
		}
		out = fmt.Sprintf("%s%s.%s.%d", m[1], m[2], m[3], patch+n)
	default:
		stem, k := r.splitSuffix(tag)
		out = fmt.Sprintf("%s%s%d", stem, r.Suffix, k+n)
	}
	if !validTag.MatchString(out) || len(out) > maxTagLen {
		return "", fmt.Errorf("%w: %q is not a valid tag (for %s)", ErrTagRule, out, tag)
	}
	return out, nil
}

// splitSuffix returns tag without a trailing Suffix and number, and that
// number (0 when there is none).
func (r *TagRule) splitSuffix(tag string) (string, int) {
	i := strings.LastIndex(tag, r.Suffix)
	if i <= 0 {
		return tag, 0
	}
	n, err := strconv.Atoi(tag[i+len(r.Suffix):])
	if err != nil || n <= 0 || strconv.Itoa(n) != tag[i+len(r.Suffix):] {
		return tag, 0
	}
	return tag[:i], n
}

// Next returns the candidates of tag that are taken, in order, and the
// first one that is not: the new release tag.
func (r *TagRule) Next(tag string, taken map[string]bool) (earlier []string, next string, err error) {
	for n := 1; ; n++ {
		c, err := r.Candidate(tag, n)
		if err != nil {
			return nil, "", err
		}
		if !taken[c] {
			return earlier, c, nil
		}
		earlier = append(earlier, c)
	}
}
