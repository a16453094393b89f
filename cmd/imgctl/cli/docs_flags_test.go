package cli

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docFlagException is a flag a document names on purpose although no
// imgctl verb has it: another tool's flag mentioned in prose, outside a
// command line that names the tool. Each needs its reason, and
// TestDocsFlagsExist fails when one no longer matches anything.
type docFlagException struct {
	doc, flag, reason string
}

var docFlagExceptions = []docFlagException{
	{"docs/commands.md", "--mount", "Dockerfile's RUN --mount=type=secret and --mount=type=ssh, in the help of build's --secret and --ssh that the flags list quotes"},
	{"docs/commands.md", "-r", "patch --suffix's default value (\"-r\"), a tag suffix that the flags list quotes from the help"},
	{"docs/commands.md", "--link", "Dockerfile's COPY --link / ADD --link (--link=true), which the lint rule link-in-windows-stage reports"},
	{"docs/architecture.md", "--link", "Dockerfile's COPY/ADD --link in the lint package's row"},
	{"docs/architecture.md", "-X", "the Go linker's -ldflags -X, with which a release stamps internal/version"},
	{"docs/architecture.md", "--write-enabled", "Azure CLI's `az acr repository update --write-enabled false`, ACR's tag lock"},
	{"docs/builders.md", "--containerd-worker-hyperv-isolation", "a buildkitd.exe flag"},
	{"docs/builders.md", "--global", "`docker buildx use --global`"},
}

// docFlagsChecker finds the flags a Markdown document names and checks
// each against a command tree:
//
//   - a command line that runs imgctl (`imgctl VERB ... --flag` in a code
//     span, a table cell or a line of a fenced block, also after a "$ "
//     prompt, "- run:", environment assignments, a pipe or &&): every flag
//     must be one of VERB's (local, inherited or hidden). So must those of
//     a code span that starts with a verb (`verify --key`), and the args of
//     a fenced GitHub Actions step of this repository's action, attributed
//     to its `command:`;
//   - a bare flag (a code span that starts with one, or plain text) in the
//     same table row or sentence as `imgctl VERB` spans must be a flag of
//     one of those verbs, elsewhere of some imgctl verb.
//
// Other tools' command lines (docker buildx, cosign, buildctl, kubectl,
// go, make, a Dockerfile's COPY...) are skipped: in fenced blocks every
// line that does not run imgctl, in prose every code span that starts
// with a word that is neither imgctl nor one of its verbs.
type docFlagsChecker struct {
	root       *cobra.Command
	exceptions []docFlagException
	used       []bool // per exception: it matched a mention

	problems []string
	commands int // imgctl command lines checked
	mentions int // bare flag mentions checked
}

func newDocFlagsChecker(root *cobra.Command, exceptions []docFlagException) *docFlagsChecker {
	return &docFlagsChecker{root: root, exceptions: exceptions, used: make([]bool, len(exceptions))}
}

var (
	// flagToken is one flag as documents write it: --name, --name=value,
	// -x, -x=value, and --prefix* for every flag with that prefix.
	flagToken = regexp.MustCompile(`^(--[a-z0-9][a-z0-9-]*\*?|-[a-zA-Z])(=.*)?$`)
	envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	// sentenceEnd ends a sentence (or a clause) in prose.
	sentenceEnd    = regexp.MustCompile(`[.;:!?](\s|$)`)
	listItemStart  = regexp.MustCompile(`^\s*([-*+]|\d+\.)\s`)
	actionUses     = regexp.MustCompile(`^\s*(-\s+)?uses:\s*(imgctl/imgctl|\./)(@\S*)?\s*(#.*)?$`)
	actionCommand  = regexp.MustCompile(`^\s*command:\s*([a-z][a-z-]*)`)
	lowercaseVerb  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	shellOperators = []string{"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "$("}
)

// flagsIn returns the flags one whitespace-separated word names: several
// for -v/--verbose or --tlscacert/--tlscert, one for [--engine or
// --sbom=generator=IMAGE], none for a value.
func flagsIn(word string) []string {
	const punct = "[](){},;:.\"'"
	var out []string
	for _, part := range strings.FieldsFunc(word, func(r rune) bool { return r == '/' || r == '|' }) {
		if m := flagToken.FindStringSubmatch(strings.Trim(part, punct)); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// lookupFlag reports whether cmd has flag (--name, -x or --prefix*):
// local, persistent, inherited, help, hidden or not.
func lookupFlag(cmd *cobra.Command, flag string) bool {
	cmd.InitDefaultHelpFlag()
	sets := []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags(), cmd.InheritedFlags()}
	name, long := strings.CutPrefix(flag, "--")
	if !long {
		short := strings.TrimPrefix(flag, "-")
		return slices.ContainsFunc(sets, func(fs *pflag.FlagSet) bool { return fs.ShorthandLookup(short) != nil })
	}
	if prefix, glob := strings.CutSuffix(name, "*"); glob {
		found := false
		for _, fs := range sets {
			fs.VisitAll(func(f *pflag.Flag) { found = found || strings.HasPrefix(f.Name, prefix) })
		}
		return found
	}
	return slices.ContainsFunc(sets, func(fs *pflag.FlagSet) bool { return fs.Lookup(name) != nil })
}

// onSomeVerb reports whether any command of the tree has flag.
func (c *docFlagsChecker) onSomeVerb(flag string) bool {
	var walk func(*cobra.Command) bool
	walk = func(cmd *cobra.Command) bool {
		return lookupFlag(cmd, flag) || slices.ContainsFunc(cmd.Commands(), walk)
	}
	return walk(c.root)
}

func childNamed(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// imgctlArgs returns the words after imgctl when words run it, after a
// "$" prompt, a YAML "- run:" and environment assignments.
func imgctlArgs(words []string) ([]string, bool) {
	for len(words) > 0 && (words[0] == "$" || words[0] == "-" || words[0] == "run:" || envAssign.MatchString(words[0])) {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil, false
	}
	if b := path.Base(words[0]); b != "imgctl" && b != "imgctl.exe" || strings.Contains(words[0], "://") {
		return nil, false // not imgctl, ./bin/imgctl or imgctl.exe; a URL
	}
	return words[1:], true
}

// splitShell splits a command line's words at pipes, &&, ;, redirections
// and a # comment.
func splitShell(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		if strings.HasPrefix(w, "#") {
			break
		}
		if slices.Contains(shellOperators, w) || strings.HasPrefix(w, ">") {
			out, cur = append(out, cur), nil
			continue
		}
		cur = append(cur, w)
	}
	return append(out, cur)
}

// checkCommand checks the flags of one imgctl command line (the words
// after imgctl) against its verb, and returns the verb (nil when the line
// names none).
func (c *docFlagsChecker) checkCommand(where string, args []string) *cobra.Command {
	if len(args) > 0 {
		c.commands++
	}
	cmd := c.root
	i := 0
	for ; i < len(args); i++ {
		sub := childNamed(cmd, args[i])
		if sub == nil {
			break
		}
		cmd = sub
	}
	if cmd == c.root && i < len(args) && !strings.HasPrefix(args[i], "-") {
		if lowercaseVerb.MatchString(args[i]) {
			c.problems = append(c.problems, fmt.Sprintf("%s: imgctl %s: no such verb", where, args[i]))
		}
		// A placeholder (imgctl VERB ...): its flags must exist somewhere.
		for _, w := range args[i:] {
			for _, f := range flagsIn(w) {
				if !c.onSomeVerb(f) {
					c.problems = append(c.problems, fmt.Sprintf("%s: %s is not a flag of any imgctl verb", where, f))
				}
			}
		}
		return nil
	}
	for _, w := range args[i:] {
		for _, f := range flagsIn(w) {
			if !lookupFlag(cmd, f) {
				c.problems = append(c.problems, fmt.Sprintf("%s: %s is not a flag of %s (see %s --help)", where, f, cmd.CommandPath(), cmd.CommandPath()))
			}
		}
	}
	if cmd == c.root {
		return nil
	}
	return cmd
}

// checkBare checks a flag named outside a command line: against verbs
// when its sentence or table row names some, else against every verb.
func (c *docFlagsChecker) checkBare(doc, where, flag string, verbs []*cobra.Command) {
	c.mentions++
	for i, e := range c.exceptions {
		if e.doc == doc && e.flag == flag {
			c.used[i] = true
			return
		}
	}
	if len(verbs) == 0 {
		if !c.onSomeVerb(flag) {
			c.problems = append(c.problems, fmt.Sprintf("%s: %s is not a flag of any imgctl verb", where, flag))
		}
		return
	}
	if slices.ContainsFunc(verbs, func(v *cobra.Command) bool { return lookupFlag(v, flag) }) {
		return
	}
	var names []string
	for _, v := range verbs {
		names = append(names, v.CommandPath())
	}
	c.problems = append(c.problems, fmt.Sprintf("%s: %s is not a flag of %s, which the same sentence or table row names", where, flag, strings.Join(names, " or ")))
}

// mdSegment is plain text or a code span's content, at off in its unit.
type mdSegment struct {
	code bool
	text string
	off  int
}

// splitCodeSpans splits Markdown inline text into plain text and code
// spans (a run of n backticks closed by the next run of exactly n).
func splitCodeSpans(s string) []mdSegment {
	var out []mdSegment
	start := 0 // of the current plain segment
	run := func(i int) int {
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		return n
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i += 2
			continue
		case s[i] != '`':
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(s); {
			if m := run(j); m > 0 {
				if m == n {
					end = j
					break
				}
				j += m
				continue
			}
			j++
		}
		if end < 0 {
			i += n
			continue
		}
		if start < i {
			out = append(out, mdSegment{text: s[start:i], off: start})
		}
		out = append(out, mdSegment{code: true, text: s[i+n : end], off: i + n})
		i = end + n
		start = i
	}
	if start < len(s) {
		out = append(out, mdSegment{text: s[start:], off: start})
	}
	return out
}

// sentences splits a paragraph's segments at sentence and clause ends in
// its plain text.
func sentences(segs []mdSegment) [][]mdSegment {
	var out [][]mdSegment
	var cur []mdSegment
	for _, sg := range segs {
		if sg.code {
			cur = append(cur, sg)
			continue
		}
		last := 0
		for _, loc := range sentenceEnd.FindAllStringIndex(sg.text, -1) {
			cur = append(cur, mdSegment{text: sg.text[last:loc[1]], off: sg.off + last})
			out, cur = append(out, cur), nil
			last = loc[1]
		}
		if last < len(sg.text) {
			cur = append(cur, mdSegment{text: sg.text[last:], off: sg.off + last})
		}
	}
	return append(out, cur)
}

// check checks one document; doc names it in problems and exceptions.
func (c *docFlagsChecker) check(doc, text string) {
	lines := strings.Split(text, "\n")
	var para []string
	paraLine := 0
	flush := func() {
		if len(para) > 0 {
			c.checkProse(doc, paraLine, strings.Join(para, "\n"), false)
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line, trimmed := lines[i], strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			flush()
			fence := trimmed[:3]
			start := i + 1
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
			}
			c.checkFenced(doc, start+1, lines[start:min(i, len(lines))])
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "|"):
			flush()
			c.checkProse(doc, i+1, trimmed, true)
		case strings.HasPrefix(trimmed, "#") || listItemStart.MatchString(line):
			flush()
			para, paraLine = []string{line}, i+1
		default:
			if len(para) == 0 {
				paraLine = i + 1
			}
			para = append(para, line)
		}
	}
	flush()
}

// checkProse checks a paragraph, list item or table row that starts at
// line firstLine.
func (c *docFlagsChecker) checkProse(doc string, firstLine int, text string, tableRow bool) {
	segs := splitCodeSpans(text)
	units := [][]mdSegment{segs} // a table row is one unit
	if !tableRow {
		units = sentences(segs)
	}
	for _, unit := range units {
		var verbs []*cobra.Command
		type bare struct{ where, flag string }
		var bares []bare
		for _, sg := range unit {
			where := fmt.Sprintf("%s:%d", doc, firstLine+strings.Count(text[:sg.off], "\n"))
			if !sg.code {
				for _, w := range strings.Fields(sg.text) {
					for _, f := range flagsIn(w) {
						bares = append(bares, bare{where, f})
					}
				}
				continue
			}
			content := sg.text
			if tableRow {
				content = strings.ReplaceAll(content, `\|`, "|")
			}
			words := strings.Fields(content)
			switch {
			case len(words) == 0:
			case func() bool { _, ok := imgctlArgs(words); return ok }():
				for _, cmdline := range splitShell(words) {
					if args, ok := imgctlArgs(cmdline); ok {
						if v := c.checkCommand(where, args); v != nil {
							verbs = append(verbs, v)
						}
					}
				}
			case childNamed(c.root, words[0]) != nil:
				// `verify --key`: a verb without imgctl before it.
				if slices.ContainsFunc(words, func(w string) bool { return len(flagsIn(w)) > 0 }) {
					c.checkCommand(where, splitShell(words)[0])
				}
			case strings.HasPrefix(words[0], "-"):
				for _, w := range words {
					for _, f := range flagsIn(w) {
						bares = append(bares, bare{where, f})
					}
				}
			default:
				// Another tool's command (`docker buildx create --append`,
				// `COPY --link`) or a value.
			}
		}
		for _, b := range bares {
			c.checkBare(doc, b.where, b.flag, verbs)
		}
	}
}

// checkFenced checks the lines of a fenced block that starts at line
// firstLine: each line that runs imgctl, after joining "\"-continued
// lines; and, in a GitHub Actions step of this repository's action, the
// flags of its args against its command.
func (c *docFlagsChecker) checkFenced(doc string, firstLine int, lines []string) {
	for i := 0; i < len(lines); i++ {
		where := fmt.Sprintf("%s:%d", doc, firstLine+i)
		logical := lines[i]
		for strings.HasSuffix(strings.TrimRight(logical, " \t"), `\`) && i+1 < len(lines) {
			logical = strings.TrimSuffix(strings.TrimRight(logical, " \t"), `\`) + " " + lines[i+1]
			i++
		}
		for _, cmdline := range splitShell(strings.Fields(logical)) {
			if args, ok := imgctlArgs(cmdline); ok {
				c.checkCommand(where, args)
			}
		}
	}
	if !slices.ContainsFunc(lines, actionUses.MatchString) {
		return
	}
	var verb *cobra.Command
	for _, l := range lines {
		if m := actionCommand.FindStringSubmatch(l); m != nil {
			verb = childNamed(c.root, m[1])
		}
	}
	if verb == nil {
		return
	}
	for i, l := range lines {
		words := strings.Fields(l)
		if len(words) == 0 || !strings.HasPrefix(words[0], "-") {
			continue
		}
		for _, f := range flagsIn(words[0]) {
			c.commands++
			if !lookupFlag(verb, f) {
				c.problems = append(c.problems, fmt.Sprintf("%s:%d: %s is not a flag of %s (the action step's command)", doc, firstLine+i, f, verb.CommandPath()))
			}
		}
	}
}

// moduleRoot is the directory of the go.mod that declares this module,
// found by walking up from the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^module\s+github\.com/imgctl/imgctl\s*$`)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && decl.Match(b) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod declaring module github.com/imgctl/imgctl above the working directory")
		}
		dir = parent
	}
}

// TestDocsFlagsExist: every flag README.md and docs/*.md name exists on
// the imgctl verb they name it with (or, named alone, on some verb); the
// exceptions are all still needed.
func TestDocsFlagsExist(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	if len(docs) < 4 {
		t.Fatalf("found only %q: the docs moved?", docs)
	}
	c := newDocFlagsChecker(NewRootCmd(), docFlagExceptions)
	seen := map[string]bool{}
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		c.check(rel, string(b))
	}
	for _, p := range c.problems {
		t.Error(p)
	}
	for i, e := range docFlagExceptions {
		if !c.used[i] {
			t.Errorf("exception %s %s (%s) is no longer needed (or %s is gone): remove it", e.doc, e.flag, e.reason, e.doc)
		}
		if e.reason == "" {
			t.Errorf("exception %s %s has no reason", e.doc, e.flag)
		}
	}
	// The reader is broken if it finds far fewer than the docs hold.
	if c.commands < 50 || c.mentions < 50 {
		t.Errorf("checked %d imgctl command lines and %d bare flag mentions: the reader is broken", c.commands, c.mentions)
	}
	t.Logf("checked %d imgctl command lines and %d bare flag mentions in %d documents", c.commands, c.mentions, len(seen))
}

// TestDocsFlagsChecker: the checker reports a flag a verb lacks wherever a
// document names it, and only that.
func TestDocsFlagsChecker(t *testing.T) {
	t.Parallel()
	const doc = "# synthetic\n" +
		"Run `imgctl verify REF --no-such-flag` first.\n" + // 2
		"\n" +
		"```sh\n" +
		"imgctl verify REF \\\n" + // 5
		"  --target ltsc2022 --bogus-continued\n" +
		"cosign verify --key k --insecure-ignore-tlog=true REF\n" +
		"docker buildx create --name pool --driver remote tcp://x:1234\n" +
		"BUILDX_BUILDER=pool imgctl build -t x . --bogus-env   # --comment-is-ignored\n" + // 9
		"$ imgctl frobnicate --x\n" + // 10
		"kubectl get nodes -o json | imgctl verify REF --nodes - --bogus-piped\n" + // 11
		"- run: imgctl lint -o sarif . > out.sarif\n" +
		"imgctl index create -t T A B --jobs 2 && imgctl index remove -t T --platform windows A\n" +
		"```\n" +
		"\n" +
		"| command | what |\n" +
		"| --- | --- |\n" +
		"| `imgctl verify REF` | reads layers with `--layers`, `-o json`; not `--platform` |\n" + // 18
		"| `imgctl build -t T [--engine containerd\\|docker] CONTEXT` | x |\n" + // 19
		"| `imgctl lint` | a `COPY --link` is reported |\n" +
		"\n" +
		"With `-v/--verbose`, `--cache-*` and `--tlscacert/--tlscert/--tls*` all exist. `--nowhere` does not,\n" + // 22
		"nor does `--nope-*`. `imgctl sign` takes `--format`, `--hidden-alias` and `--policy`.\n" + // 23
		"`verify --keyz` is wrong too, and `go build -tags x` and `make test` are not imgctl's.\n" + // 24
		"An `imgctl verify\n  --target x\n  --multiline-bogus` span.\n" + // 25
		"Plain prose may say --plain-bogus or --platform. `https://github.com/imgctl/imgctl` is a URL.\n" + // 28
		"`--other-tool` is excepted.\n" +
		"\n" +
		"```yaml\n" +
		"- uses: imgctl/imgctl@main\n" +
		"  with:\n" +
		"    command: lint\n" +
		"    args: |\n" +
		"      --windows=ltsc2022\n" +
		"      --tag=x\n" + // 37
		"```\n"
	root := NewRootCmd()
	sign, _, err := root.Find([]string{"sign"})
	if err != nil {
		t.Fatal(err)
	}
	sign.Flags().Bool("hidden-alias", false, "")
	if err := sign.Flags().MarkHidden("hidden-alias"); err != nil {
		t.Fatal(err)
	}
	c := newDocFlagsChecker(root, []docFlagException{
		{"synthetic.md", "--other-tool", "a test"},
		{"synthetic.md", "--never-named", "a test"},
	})
	c.check("synthetic.md", doc)
	want := []string{
		"synthetic.md:2: --no-such-flag is not a flag of imgctl verify",
		"synthetic.md:5: --bogus-continued is not a flag of imgctl verify",
		"synthetic.md:9: --bogus-env is not a flag of imgctl build",
		"synthetic.md:10: imgctl frobnicate: no such verb",
		"synthetic.md:10: --x is not a flag of any imgctl verb",
		"synthetic.md:11: --bogus-piped is not a flag of imgctl verify",
		"synthetic.md:18: --platform is not a flag of imgctl verify, which the same sentence or table row names",
		"synthetic.md:19: --engine is not a flag of imgctl build",
		"synthetic.md:22: --nowhere is not a flag of any imgctl verb",
		"synthetic.md:23: --nope-* is not a flag of any imgctl verb",
		"synthetic.md:23: --policy is not a flag of imgctl sign, which the same sentence or table row names",
		"synthetic.md:24: --keyz is not a flag of imgctl verify",
		"synthetic.md:25: --multiline-bogus is not a flag of imgctl verify",
		"synthetic.md:28: --plain-bogus is not a flag of any imgctl verb",
		"synthetic.md:37: --tag is not a flag of imgctl lint (the action step's command)",
	}
	got := c.problems
	samePrefixes(t, got, want)
	if !c.used[0] || c.used[1] {
		t.Errorf("exceptions used = %v, want [true false]", c.used)
	}
}

var (
	// mdLinkTarget is the target of an inline Markdown link, [text](target).
	mdLinkTarget = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	mdCodeSpan   = regexp.MustCompile("`[^`]*`")
	mdHeading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*$`)
)

// mdProse calls fn with each line of a Markdown document that is not in a
// fenced block, and its 1-based number.
func mdProse(text string, fn func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			fn(i+1, line)
		}
	}
}

// githubSlug is the anchor GitHub gives a heading: lower case, with
// everything but letters, digits, hyphens and underscores dropped and
// spaces turned into hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// mdAnchors returns the anchors of a Markdown document's headings, with
// GitHub's -1, -2 ... suffixes for repeated ones.
func mdAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	mdProse(text, func(_ int, line string) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		slug := githubSlug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	})
	return anchors
}

// checkDocLinks checks the relative links of the Markdown documents docs
// (paths relative to root, with slashes): each must name a file or
// directory that exists, and a #fragment a heading of the Markdown file it
// names (of the document itself when the link is only a fragment). Links
// with a scheme (https:, mailto:) are left alone. It returns the
// problems and the number of links checked.
func checkDocLinks(root string, docs []string) (problems []string, links int) {
	anchors := map[string]map[string]bool{} // by path relative to root
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		anchors[rel] = mdAnchors(string(b))
		return anchors[rel], nil
	}
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		mdProse(string(b), func(n int, line string) {
			line = mdCodeSpan.ReplaceAllString(line, "")
			for _, m := range mdLinkTarget.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, ":") {
					continue // https://..., mailto:...
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				rel := doc
				if file != "" {
					rel = path.Join(path.Dir(doc), file)
					if rel == ".." || strings.HasPrefix(rel, "../") {
						problems = append(problems, fmt.Sprintf("%s:%d: %s is outside the repository", doc, n, target))
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file (%s)", doc, n, target, rel))
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(rel, ".md") {
					continue
				}
				a, err := anchorsOf(rel)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: %v", doc, n, target, err))
					continue
				}
				if !a[frag] {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", doc, n, target, rel, frag))
				}
			}
		})
	}
	return problems, links
}

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file of the repository, and every #fragment a heading of its page.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	rels := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	problems, links := checkDocLinks(root, rels)
	for _, p := range problems {
		t.Error(p)
	}
	// README.md is a short page that links to docs/ for every reference.
	if links < 20 {
		t.Errorf("checked %d relative links in %q: the reader is broken", links, rels)
	}
	t.Logf("checked %d relative links in %d documents", links, len(rels))
}

// TestDocsLinksChecker: the link checker reports a missing file, a
// missing heading and a link out of the repository, and only those.
func TestDocsLinksChecker(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"README.md": "# Title\n" +
			"See [a](docs/a.md), [its rules](docs/a.md#verify-rules), [tags](docs/a.md#tags-imgctls-rule-the-registrys) and [gone](docs/gone.md).\n" + // 2
			"[Up](#title), [nowhere](#nowhere), [web](https://example.com/x.md#y), `[code](docs/nope.md)`.\n" + // 3
			"```\n[fenced](docs/nope.md)\n# not a heading\n```\n" +
			"[fenced heading](#not-a-heading) [dir](docs)\n", // 8
		"docs/a.md": "# A\n## verify rules\n## Tags: imgctl's rule, the registry's\n## A\n" +
			"[back](../README.md#title) [out](../../x.md) [second A](#a-1) [third A](#a-2)\n", // 5
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, links := checkDocLinks(root, []string{"README.md", "docs/a.md"})
	want := []string{
		"README.md:2: docs/gone.md: no such file",
		"README.md:3: #nowhere: README.md has no heading #nowhere",
		"README.md:8: #not-a-heading: README.md has no heading #not-a-heading",
		"docs/a.md:5: ../../x.md is outside the repository",
		"docs/a.md:5: #a-2: docs/a.md has no heading #a-2",
	}
	samePrefixes(t, got, want)
	if links != 12 {
		t.Errorf("checked %d links, want 12", links)
	}
	if got := githubSlug("Tags: imgctl's rule, the registry's, and concurrent publishers"); got != "tags-imgctls-rule-the-registrys-and-concurrent-publishers" {
		t.Errorf("githubSlug = %q", got)
	}
}

// samePrefixes fails t unless every problem reported (got) starts with
// one of want and every want starts some problem.
func samePrefixes(t *testing.T, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("not reported: %s", w)
		}
	}
	for _, g := range got {
		if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("reported, but fine: %s", g)
		}
	}
}
