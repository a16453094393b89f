package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagsSection is the heading of docs/commands.md's list of every verb's
// flags, which TestDocsCommandFlags compares with the help.
const flagsSection = "## Flags of each verb"

// updateDocsEnv, set to 1, makes TestDocsCommandFlags rewrite the list
// from the help instead of comparing them.
const updateDocsEnv = "IMGCTL_UPDATE_DOCS"

// flagDoc is one flag as --help prints it: the spec (-t, --tag
// stringArray) and the text after it, with pflag's (default ...).
type flagDoc struct{ spec, usage string }

// helpFlags returns what cmd --help lists of its own flags (the root's
// persistent flags for the root), in the help's order: hidden flags (old
// spellings) and --help left out.
func helpFlags(cmd *cobra.Command) []flagDoc {
	var out []flagDoc
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		one := pflag.NewFlagSet("", pflag.ContinueOnError)
		one.AddFlag(f)
		line := strings.TrimSpace(one.FlagUsagesWrapped(0))
		// One flag: its spec, at least three spaces, its usage.
		spec, usage, _ := strings.Cut(line, "   ")
		out = append(out, flagDoc{spec: spec, usage: strings.TrimSpace(usage)})
	})
	return out
}

// documentedCommands returns the commands the list has a table for:
// the root (its persistent flags, which every verb takes) and every
// runnable verb, by command path.
func documentedCommands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				out = append(out, sub)
			}
			walk(sub)
		}
	}
	walk(root)
	return out
}

// mdCell escapes a table cell's pipes as the docs write them.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// flagsMarkdown is the list as docs/commands.md holds it: a table per
// command, in the tree's order.
func flagsMarkdown(root *cobra.Command) string {
	var b strings.Builder
	for _, c := range documentedCommands(root) {
		title := c.CommandPath()
		if c == root {
			title += " (every verb)"
		}
		fmt.Fprintf(&b, "\n### %s\n\n", title)
		fs := helpFlags(c)
		if len(fs) == 0 {
			b.WriteString("No flags of its own.\n")
			continue
		}
		b.WriteString("| flag | what it does |\n| --- | --- |\n")
		for _, f := range fs {
			fmt.Fprintf(&b, "| `%s` | %s |\n", mdCell(f.spec), mdCell(f.usage))
		}
	}
	return b.String()
}

// docFlagTables reads the list back: per command path, its rows, with the
// line of each; the section's text; and where it starts and ends.
func docFlagTables(doc string) (tables map[string][]flagDoc, lines map[string]int, start, end int, err error) {
	start = strings.Index(doc, "\n"+flagsSection+"\n")
	if start < 0 {
		return nil, nil, 0, 0, fmt.Errorf("no %q section", flagsSection)
	}
	start++
	end = len(doc)
	if i := strings.Index(doc[start+len(flagsSection):], "\n## "); i >= 0 {
		end = start + len(flagsSection) + i + 1
	}
	tables, lines = map[string][]flagDoc{}, map[string]int{}
	first := strings.Count(doc[:start], "\n") + 1
	cmd := ""
	for i, l := range strings.Split(doc[start:end], "\n") {
		switch {
		case strings.HasPrefix(l, "### "):
			cmd = strings.TrimSuffix(strings.TrimPrefix(l, "### "), " (every verb)")
			tables[cmd], lines[cmd] = []flagDoc{}, first+i
		case strings.HasPrefix(l, "| `") && cmd != "":
			spec, usage, ok := strings.Cut(strings.TrimPrefix(l, "| `"), "` | ")
			if !ok || !strings.HasSuffix(usage, " |") {
				return nil, nil, 0, 0, fmt.Errorf("docs/commands.md:%d: want | `SPEC` | USAGE |", first+i)
			}
			unescape := func(s string) string { return strings.ReplaceAll(s, `\|`, "|") }
			tables[cmd] = append(tables[cmd], flagDoc{unescape(spec), unescape(strings.TrimSuffix(usage, " |"))})
		}
	}
	return tables, lines, start, end, nil
}

// compareFlagDocs returns how the list in doc differs from root's help.
func compareFlagDocs(root *cobra.Command, doc string) ([]string, error) {
	tables, lines, _, _, err := docFlagTables(doc)
	if err != nil {
		return nil, err
	}
	var problems []string
	seen := map[string]bool{}
	for _, c := range documentedCommands(root) {
		path := c.CommandPath()
		seen[path] = true
		rows, ok := tables[path]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no ### %s table", flagsSection, path))
			continue
		}
		help := helpFlags(c)
		for _, h := range help {
			i := slices.IndexFunc(rows, func(r flagDoc) bool { return flagSpecName(r.spec) == flagSpecName(h.spec) })
			switch {
			case i < 0:
				problems = append(problems, fmt.Sprintf("docs/commands.md:%d: %s: %s is not listed (help: `%s` %s)", lines[path], path, flagSpecName(h.spec), h.spec, h.usage))
			case rows[i] != h:
				problems = append(problems, fmt.Sprintf("docs/commands.md:%d: %s: %s differs from the help:\n  docs: `%s` %s\n  help: `%s` %s",
					lines[path], path, flagSpecName(h.spec), rows[i].spec, rows[i].usage, h.spec, h.usage))
			}
		}
		for _, r := range rows {
			if !slices.ContainsFunc(help, func(h flagDoc) bool { return flagSpecName(h.spec) == flagSpecName(r.spec) }) {
				problems = append(problems, fmt.Sprintf("docs/commands.md:%d: %s: %s is listed but is not a flag of it (or is hidden)", lines[path], path, flagSpecName(r.spec)))
			}
		}
	}
	for path := range tables {
		if !seen[path] {
			problems = append(problems, fmt.Sprintf("docs/commands.md:%d: ### %s: no such verb", lines[path], path))
		}
	}
	slices.Sort(problems)
	return problems, nil
}

// flagSpecName is the long name in a spec: --tag of "-t, --tag stringArray".
func flagSpecName(spec string) string {
	for _, w := range strings.Fields(spec) {
		if strings.HasPrefix(w, "--") {
			return w
		}
	}
	return spec
}

// TestDocsCommandFlags: docs/commands.md lists every flag of every verb
// with the text --help prints for it (its value name, help and default),
// and nothing else. With IMGCTL_UPDATE_DOCS=1 it rewrites the list from
// the help instead.
func TestDocsCommandFlags(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "docs", "commands.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, root := string(b), NewRootCmd()
	if os.Getenv(updateDocsEnv) == "1" {
		_, _, start, end, err := docFlagTables(doc)
		if err != nil {
			t.Fatal(err)
		}
		head := doc[start : start+len(flagsSection)]
		intro := doc[start+len(flagsSection) : end]
		if i := strings.Index(intro, "\n### "); i >= 0 {
			intro = intro[:i+1]
		}
		section := head + strings.TrimRight(intro, "\n") + "\n" + flagsMarkdown(root)
		if end < len(doc) {
			section += "\n"
		}
		if err := os.WriteFile(path, []byte(doc[:start]+section+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s in %s", flagsSection, path)
		return
	}
	problems, err := compareFlagDocs(root, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf("if the help is right, rewrite the list with %s=1 go test ./cmd/imgctl/cli -run TestDocsCommandFlags", updateDocsEnv)
	}
}

// TestDocsCommandFlagsChecker: the comparison reports a flag the docs
// lack, one they list that the verb lacks, a changed help text and a
// missing verb; the help it compares is pflag's own line (value name
// and default included).
func TestDocsCommandFlagsChecker(t *testing.T) {
	root := NewRootCmd()
	doc := "# x\n\n" + flagsSection + "\n\nintro\n" + flagsMarkdown(root) + "\n## next\n"
	if p, err := compareFlagDocs(root, doc); err != nil || len(p) > 0 {
		t.Fatalf("the generated list differs from the help: %v %q", err, p)
	}
	verify, _, err := root.Find([]string{"verify"})
	if err != nil {
		t.Fatal(err)
	}
	if got := helpFlags(verify); !slices.Contains(got, flagDoc{"--jobs int", "manifest and config reads at once, 1 or more (small documents: more at once than blob transfers) (default 8)"}) ||
		!slices.ContainsFunc(got, func(f flagDoc) bool { return f.spec == "--nodes FILE" }) ||
		slices.ContainsFunc(got, func(f flagDoc) bool { return f.spec == "--target strings" }) {
		t.Errorf("verify's help flags: %q", got)
	}
	verify.Flags().Bool("planted", false, "a flag without docs")
	doc = strings.Replace(doc, "| `--layers` |", "| `--layers` | changed |", 1)
	doc = strings.Replace(doc, "\n### imgctl keygen\n", "\n### imgctl keygen\n\n| `--gone string` | a flag keygen lacks |\n", 1)
	doc = strings.Replace(doc, "### imgctl version", "### imgctl versions", 1)
	got, err := compareFlagDocs(root, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"imgctl verify: --planted is not listed",
		"imgctl verify: --layers differs from the help",
		"imgctl keygen: --gone is listed but is not a flag of it",
		"has no ### imgctl version table",
		"### imgctl versions: no such verb",
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("not reported: %s; got %q", want, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("reported %d problems, want 5: %q", len(got), got)
	}
}
