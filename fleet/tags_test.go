package fleet

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestTagRuleNext(t *testing.T) {
	def, err := NewTagRule("", "")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTagRule("", "{{.Tag}}-patch{{.N}}")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule    *TagRule
		tag     string
		taken   []string
		earlier []string
		next    string
	}{
		{def, "1.4.2", nil, nil, "1.4.3"},
		{def, "1.4.2", []string{"1.4.2", "1.4.3"}, []string{"1.4.3"}, "1.4.4"},
		{def, "v2.0.9", nil, nil, "v2.0.10"},
		{def, "1.4.2-rc1", nil, nil, "1.4.2-rc1-r1"},
		{def, "latest", []string{"latest-r1"}, []string{"latest-r1"}, "latest-r2"},
		{def, "latest-r1", nil, nil, "latest-r2"},
		{def, "ltsc2022", nil, nil, "ltsc2022-r1"},
		{tmpl, "1.4.2", []string{"1.4.2-patch1"}, []string{"1.4.2-patch1"}, "1.4.2-patch2"},
	} {
		taken := map[string]bool{}
		for _, x := range tc.taken {
			taken[x] = true
		}
		earlier, next, err := tc.rule.Next(tc.tag, taken)
		if err != nil || next != tc.next || !slices.Equal(earlier, tc.earlier) {
			t.Errorf("Next(%q, %v) = %v, %q, %v; want %v, %q", tc.tag, tc.taken, earlier, next, err, tc.earlier, tc.next)
		}
	}
}

func TestNewTagRuleRefuses(t *testing.T) {
	for _, tc := range []struct{ suffix, tmpl string }{
		{"/x", ""}, {"", "{{.Tag}}-fixed"}, {"", "{{.Nope}}"}, {"", "{{"},
	} {
		if _, err := NewTagRule(tc.suffix, tc.tmpl); !errors.Is(err, ErrTagRule) {
			t.Errorf("NewTagRule(%q, %q) = %v, want ErrTagRule", tc.suffix, tc.tmpl, err)
		}
	}
}

// TestShardStable: every reference is in exactly one shard, whatever the
// order of the list, and the shards are not empty for a list of 100.
func TestShardStable(t *testing.T) {
	const n = 4
	counts := make([]int, n)
	for i := range 100 {
		ref := fmt.Sprintf("reg.example.com/team/app%d:1.0.%d", i, i)
		in := 0
		for s := 1; s <= n; s++ {
			if (Shard{s, n}).Has(ref) {
				in++
				counts[s-1]++
			}
		}
		if in != 1 {
			t.Errorf("%s is in %d shards", ref, in)
		}
	}
	for i, c := range counts {
		if c == 0 {
			t.Errorf("shard %d/%d is empty", i+1, n)
		}
	}
	for _, s := range []string{"0/4", "5/4", "1/0", "a/b", "1"} {
		if _, err := ParseShard(s); !errors.Is(err, ErrShard) {
			t.Errorf("ParseShard(%q) = %v, want ErrShard", s, err)
		}
	}
}

func TestMerge(t *testing.T) {
	var into Report
	a := Report{Images: []Image{{Ref: "a", Outcome: Promoted}, {Ref: "b", Outcome: Failed, Failure: FailureCheck}}, Summary: Summary{BaseLookups: 3}}
	b := Report{Images: []Image{{Ref: "c", Outcome: Current}}, Summary: Summary{BaseLookups: 2}}
	if err := Merge(&into, a); err != nil {
		t.Fatal(err)
	}
	if err := Merge(&into, b); err != nil {
		t.Fatal(err)
	}
	s := into.Summary
	if s.Total != 3 || s.Promoted != 1 || s.Current != 1 || s.Failed != 1 || s.Checks != 1 || s.BaseLookups != 5 {
		t.Errorf("merged summary %+v", s)
	}
	if err := Merge(&into, b); !errors.Is(err, ErrMergeOverlap) {
		t.Errorf("merging c twice: %v, want ErrMergeOverlap", err)
	}
}
