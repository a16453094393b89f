package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// usageNode is one part of a usage line of the command table: a word, or an optional
// [...] group of parts.
type usageNode struct {
	word     string
	optional []usageNode
	isGroup  bool
}

// parseUsage splits a usage line into words and [...] groups, nested.
func parseUsage(s string) ([]usageNode, error) {
	nodes, rest, err := parseUsageSeq(s, 0)
	if err != nil {
		return nil, err
	}
	if rest != len(s) {
		return nil, fmt.Errorf("unbalanced ] at %d in %q", rest, s)
	}
	return nodes, nil
}

func parseUsageSeq(s string, i int) ([]usageNode, int, error) {
	var out []usageNode
	var word strings.Builder
	flush := func() {
		if word.Len() > 0 {
			out = append(out, usageNode{word: word.String()})
			word.Reset()
		}
	}
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t':
			flush()
			i++
		case '[':
			flush()
			inner, next, err := parseUsageSeq(s, i+1)
			if err != nil {
				return nil, 0, err
			}
			if next >= len(s) || s[next] != ']' {
				return nil, 0, fmt.Errorf("unclosed [ in %q", s)
			}
			out = append(out, usageNode{optional: inner, isGroup: true})
			i = next + 1
		case ']':
			flush()
			return out, i, nil
		default:
			word.WriteByte(c)
			i++
		}
	}
	flush()
	return out, i, nil
}

// usageArgs expands parsed usage into one command line: optional groups
// in or out, "X..." repeated n times, and of "a|b|c" alternatives the
// alt-th (the last when there are fewer).
func usageArgs(nodes []usageNode, withOptional bool, repeat, alt int) []string {
	var out []string
	for _, n := range nodes {
		if n.isGroup {
			if withOptional {
				out = append(out, usageArgs(n.optional, true, repeat, alt)...)
			}
			continue
		}
		w := n.word
		if alts := strings.Split(w, "|"); len(alts) > 1 {
			w = alts[min(alt, len(alts)-1)]
		}
		if base, ok := strings.CutSuffix(w, "..."); ok && base != "" {
			for range repeat {
				out = append(out, base)
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// anyValue takes any flag value: a usage line's placeholders (REF,
// nodes.json) are not values the real flags accept, and some read files
// when set (--nodes).
type anyValue struct{ typ, s string }

func (v *anyValue) String() string     { return v.s }
func (v *anyValue) Set(s string) error { v.s = s; return nil }
func (v *anyValue) Type() string       { return v.typ }

// checkCommandLine runs args (without "imgctl") through a fresh root
// command's parser, without executing anything: the command must exist
// and be runnable, every flag must exist and get a value when it takes
// one (what the value is is not checked), and the positional arguments
// must satisfy the command's Args rule.
func checkCommandLine(args []string) error {
	root := NewRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if !cmd.Runnable() {
		return fmt.Errorf("%q is not a command that runs (unknown subcommand?)", cmd.CommandPath())
	}
	if err := cmd.ParseFlags(nil); err != nil { // merges the persistent flags
		return err
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) { f.Value = &anyValue{typ: f.Value.Type()} })
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// checkUsage checks one usage line of the command table in its shortest form (no
// optional part, one of each X...) and its longest forms (every optional
// part, two of each X..., each alternative of a|b).
func checkUsage(usage string) error {
	words, ok := strings.CutPrefix(usage, "imgctl ")
	if !ok {
		return fmt.Errorf("%q does not start with imgctl", usage)
	}
	nodes, err := parseUsage(words)
	if err != nil {
		return err
	}
	alts := 1
	for _, w := range strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(words)) {
		alts = max(alts, strings.Count(w, "|")+1)
	}
	lines := [][]string{usageArgs(nodes, false, 1, 0)}
	for alt := range alts {
		lines = append(lines, usageArgs(nodes, true, 2, alt))
	}
	var errs []error
	for _, args := range lines {
		if err := checkCommandLine(args); err != nil {
			errs = append(errs, fmt.Errorf("imgctl %s: %w", strings.Join(args, " "), err))
		}
	}
	return errors.Join(errs...)
}

// commandTable is the page that holds the command table (README.md
// links to it), and commandTableSection the heading of its section.
const (
	commandTable        = "docs/commands.md"
	commandTableSection = "## Verbs"
)

// readmeUsages returns the usage lines of the command table (the
// commandTableSection of commandTable): every `imgctl ...` code span of
// each row's first cell, with \| turned into the | of alternatives.
func readmeUsages(t *testing.T) []string {
	t.Helper()
	dt, err := os.ReadFile(filepath.Join(moduleRoot(t), filepath.FromSlash(commandTable)))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(dt), "\n"+commandTableSection+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", commandTable, commandTableSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	span := regexp.MustCompile("`([^`]*)`")
	var out []string
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "| ---") || strings.HasPrefix(line, "| command") {
			continue
		}
		first := firstCell(line)
		for _, m := range span.FindAllStringSubmatch(first, -1) {
			if u := strings.ReplaceAll(m[1], `\|`, "|"); strings.HasPrefix(u, "imgctl ") {
				out = append(out, u)
			}
		}
	}
	return out
}

// firstCell returns the first cell of a Markdown table row, where \| does
// not end a cell.
func firstCell(row string) string {
	row = strings.TrimPrefix(row, "|")
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			return row[:i]
		}
	}
	return row
}

// TestREADMEUsage: every usage line of the command table (docs/commands.md,
// which README.md links to) parses
// as the CLI parses it (the command exists, every flag does, and the
// positional arguments are as many as the command takes), and every verb
// of the CLI has a line there.
func TestREADMEUsage(t *testing.T) {
	t.Parallel()
	usages := readmeUsages(t)
	if len(usages) < 10 {
		t.Fatalf("found %d usage lines in %s's command table: the reader is broken\n%q", len(usages), commandTable, usages)
	}
	documented := map[string]bool{}
	for _, u := range usages {
		if err := checkUsage(u); err != nil {
			t.Errorf("%s usage %q disagrees with --help:\n%v", commandTable, u, err)
		}
		if cmd, _, err := NewRootCmd().Find(strings.Fields(strings.TrimPrefix(u, "imgctl "))); err == nil {
			documented[cmd.CommandPath()] = true
		}
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.HasParent() {
			if !documented[c.CommandPath()] {
				t.Errorf("%s is not in %s's command table", c.CommandPath(), commandTable)
			}
			// --help's own usage line must parse too.
			_, args, _ := strings.Cut(c.Use, " ")
			help := strings.TrimSpace(c.CommandPath() + " " + strings.ReplaceAll(args, "[flags]", ""))
			if err := checkUsage(help); err != nil {
				t.Errorf("--help usage %q does not parse:\n%v", help, err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd())
}

// TestUsageChecker: the checker fails an unknown command, an unknown
// flag, a subcommand group without its subcommand, and too few or too
// many positional arguments; it handles placeholders, [...] parts,
// repetition and alternatives.
func TestUsageChecker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		usage string
		ok    bool
	}{
		{"imgctl inspect REF", true},
		{"imgctl resolve REF --platform windows/amd64 [--engine containerd|containerd-legacy|docker]", true},
		{"imgctl index create -t TAG SRC... [--annotation k=v]", true},
		{"imgctl lint [-f Dockerfile [--target T]] [CONTEXT]", true},
		{"imgctl frobnicate REF", false},
		{"imgctl inspect REF --frobnicate", false},
		{"imgctl inspect REF [--frobnicate]", false},
		{"imgctl inspect REF [--insecure|--frobnicate]", false},
		{"imgctl resolve REF [--platform]", false}, // a flag that takes a value, without one
		{"imgctl inspect", false},
		{"imgctl inspect REF OTHER", false},
		{"imgctl inspect REF...", false}, // two REFs in the long form
		{"imgctl index TAG", false},
		{"imgctl index [unclosed", false},
	} {
		if err := checkUsage(tc.usage); (err == nil) != tc.ok {
			t.Errorf("checkUsage(%q) = %v, want ok: %t", tc.usage, err, tc.ok)
		}
	}
	if got := firstCell("| `a --engine x\\|y` | what | more |"); got != " `a --engine x\\|y` " {
		t.Errorf("firstCell = %q", got)
	}
	nodes, err := parseUsage("a [b [c]] D... x|y|z")
	if err != nil {
		t.Fatal(err)
	}
	if got := usageArgs(nodes, true, 2, 1); !slices.Equal(got, []string{"a", "b", "c", "D", "D", "y"}) {
		t.Errorf("usageArgs long form = %q", got)
	}
	if got := usageArgs(nodes, false, 1, 0); !slices.Equal(got, []string{"a", "D", "x"}) {
		t.Errorf("usageArgs short form = %q", got)
	}
}
