package depcheck

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Architecture is what docs/architecture.md states of the module's
// packages, in four tables: the aliases the others may use, one row per
// product package, one row per tool with rules of its own, and the folders
// of the harnesses and tools.
type Architecture struct {
	// Products are the product packages (paths relative to the module).
	Products map[string]Row
	// Tools are the programs below a harness folder that have rules of
	// their own (imgctl's release library and commands).
	Tools map[string]Row
	// Harnesses are the folders of the test harnesses, tools and examples,
	// sorted: a package is one when its path is one of these or lies below
	// one.
	Harnesses []string
	// Diagram is the page's drawing of the layers.
	Diagram Diagram
}

// Diagram is the page's first fenced code block, a drawing of the layers:
// one line per layer, top first, each a label and then packages separated
// by two spaces or more; "a ──► b" on a line draws an import between two
// packages of one layer ("a ──► b, c" two). A line that starts with a
// space is a note, and a word that is no product package is left alone.
type Diagram struct {
	// Layer is each product package's line, counted from the top.
	Layer map[string]int
	// Arrows are the packages each package points at on its own line.
	Arrows map[string][]string
}

// Row is one package's rules.
type Row struct {
	// MayImport are the module's packages it may import, directly or
	// through others, sorted; empty for "nothing".
	MayImport []string
	// MustNotLink are the packages outside the module it must not link,
	// directly or through others.
	MustNotLink []Ban
}

// Ban is one pattern a package must not link: an import path, or one
// ending in "/..." for that path and every path below it (as the go
// command reads patterns).
type Ban struct {
	Pattern string
	// As is the alias the table named it by ("network"), or "".
	As string
}

// Matches reports whether the import path ip is one the ban names.
func (b Ban) Matches(ip string) bool {
	if pre, ok := strings.CutSuffix(b.Pattern, "/..."); ok {
		return ip == pre || strings.HasPrefix(ip, pre+"/")
	}
	return ip == b.Pattern
}

// IsHarness reports whether the package at path is a harness, tool or
// example: whether it lies in one of the harness folders.
func (a Architecture) IsHarness(path string) bool {
	return slices.ContainsFunc(a.Harnesses, func(h string) bool { return path == h || strings.HasPrefix(path, h+"/") })
}

// Row returns the rules of a product package or tool, and whether it has
// a row.
func (a Architecture) Row(path string) (Row, bool) {
	if r, ok := a.Products[path]; ok {
		return r, true
	}
	r, ok := a.Tools[path]
	return r, ok
}

// table is one Markdown table: its header's cells and its rows, each with
// its line number.
type table struct {
	header []string
	rows   [][]string
	lines  []int
	line   int // the header's
}

func (t table) column(prefix string) int {
	return slices.IndexFunc(t.header, func(c string) bool { return strings.HasPrefix(c, prefix) })
}

// ParseArchitecture reads the tables of md, a Markdown page, by the first
// cell of their header:
//
//   - "alias": in each row a name and, in the column headed "stands
//     for", a comma-separated list of paths in backquotes;
//   - "package": one row per product package, its path in backquotes
//     first; a column headed "may import ..." holds "nothing" or a
//     comma-separated list of the module's packages in backquotes and
//     aliases, and one headed "must not link ..." the same of import paths
//     or patterns outside the module ("nothing" for none);
//   - "tool": the same for tools, the "must not link" column optional;
//   - "harness": in each row the first cell is one folder in backquotes;
//
// and the diagram, the page's first fenced code block (see Diagram).
//
// Anything else in those cells, a path named twice, an unknown alias or a
// missing table is an error naming the line.
func ParseArchitecture(md string) (Architecture, error) {
	a := Architecture{Products: map[string]Row{}, Tools: map[string]Row{}}
	tables := map[string][]table{}
	for _, t := range readTables(md) {
		tables[t.header[0]] = append(tables[t.header[0]], t)
	}
	for _, want := range []string{"alias", "package", "tool", "harness"} {
		if len(tables[want]) != 1 {
			return a, fmt.Errorf("want one table headed | %s | ..., found %d", want, len(tables[want]))
		}
	}
	aliases, err := parseAliases(tables["alias"][0])
	if err != nil {
		return a, err
	}
	if err := parseRows(tables["package"][0], aliases, true, a.Products); err != nil {
		return a, err
	}
	if err := parseRows(tables["tool"][0], aliases, false, a.Tools); err != nil {
		return a, err
	}
	for j, c := range tables["harness"][0].rows {
		h, ok := quoted(c[0])
		if !ok || len(c) != len(tables["harness"][0].header) {
			return a, fmt.Errorf("line %d: want %d cells, the first one path in backquotes", tables["harness"][0].lines[j], len(tables["harness"][0].header))
		}
		if slices.Contains(a.Harnesses, h) {
			return a, fmt.Errorf("line %d: harness %s is listed twice", tables["harness"][0].lines[j], h)
		}
		a.Harnesses = append(a.Harnesses, h)
	}
	sort.Strings(a.Harnesses)
	if a.Diagram, err = parseDiagram(md, a.Products); err != nil {
		return a, err
	}
	for p := range a.Tools {
		if _, dup := a.Products[p]; dup {
			return a, fmt.Errorf("%s has a row in the package table and in the tool table", p)
		}
	}
	return a, nil
}

// readTables returns md's tables: runs of lines starting with "|" whose
// second line is a | --- | line.
func readTables(md string) []table {
	var out []table
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !isTableRow(lines[i]) {
			continue
		}
		start := i
		for i+1 < len(lines) && isTableRow(lines[i+1]) {
			i++
		}
		if i == start || !strings.HasPrefix(strings.TrimLeft(lines[start+1], "| "), "---") {
			continue
		}
		t := table{header: cells(lines[start]), line: start + 1}
		for j := start + 2; j <= i; j++ {
			t.rows = append(t.rows, cells(lines[j]))
			t.lines = append(t.lines, j+1)
		}
		out = append(out, t)
	}
	return out
}

func parseAliases(t table) (map[string][]string, error) {
	col := t.column("stands for")
	if col < 0 {
		return nil, fmt.Errorf("line %d: the alias table has no \"stands for\" column", t.line)
	}
	aliases := map[string][]string{}
	for j, c := range t.rows {
		if len(c) != len(t.header) {
			return nil, fmt.Errorf("line %d: %d cells, want %d (a | inside a cell?)", t.lines[j], len(c), len(t.header))
		}
		if c[0] == "" || strings.Contains(c[0], "`") {
			return nil, fmt.Errorf("line %d: an alias is a name without backquotes, not %q", t.lines[j], c[0])
		}
		if _, dup := aliases[c[0]]; dup {
			return nil, fmt.Errorf("line %d: alias %q is defined twice", t.lines[j], c[0])
		}
		for item := range strings.SplitSeq(c[col], ",") {
			p, ok := quoted(strings.TrimSpace(item))
			if !ok {
				return nil, fmt.Errorf("line %d: alias %q stands for %q: want paths in backquotes, separated by commas", t.lines[j], c[0], strings.TrimSpace(item))
			}
			aliases[c[0]] = append(aliases[c[0]], p)
		}
	}
	return aliases, nil
}

// parseRows reads the rows of a package or tool table into rows.
func parseRows(t table, aliases map[string][]string, needBans bool, rows map[string]Row) error {
	mayCol, banCol := t.column("may import"), t.column("must not link")
	if mayCol < 0 || (needBans && banCol < 0) {
		return fmt.Errorf("line %d: the %s table needs a \"may import\" column and a \"must not link\" one", t.line, t.header[0])
	}
	for j, c := range t.rows {
		if err := addRow(c, len(t.header), mayCol, banCol, aliases, rows); err != nil {
			return fmt.Errorf("line %d: %w", t.lines[j], err)
		}
	}
	return nil
}

func addRow(c []string, width, mayCol, banCol int, aliases map[string][]string, rows map[string]Row) error {
	if len(c) != width {
		return fmt.Errorf("%d cells, want %d (a | inside a cell, or a cell missing?)", len(c), width)
	}
	pkg, ok := quoted(c[0])
	if !ok {
		return fmt.Errorf("the first cell %q is not one package in backquotes", c[0])
	}
	if _, dup := rows[pkg]; dup {
		return fmt.Errorf("package %s has two rows", pkg)
	}
	var r Row
	may, err := items(c[mayCol], aliases)
	if err != nil {
		return fmt.Errorf("%s may import %w", pkg, err)
	}
	for _, it := range may {
		r.MayImport = append(r.MayImport, it.Pattern)
	}
	sort.Strings(r.MayImport)
	r.MayImport = slices.Compact(r.MayImport)
	if banCol >= 0 {
		if r.MustNotLink, err = items(c[banCol], aliases); err != nil {
			return fmt.Errorf("%s must not link %w", pkg, err)
		}
	}
	rows[pkg] = r
	return nil
}

// items reads a cell: "nothing", or paths in backquotes and aliases,
// separated by commas.
func items(cell string, aliases map[string][]string) ([]Ban, error) {
	out := []Ban{}
	if cell == "nothing" {
		return out, nil
	}
	for item := range strings.SplitSeq(cell, ",") {
		item = strings.TrimSpace(item)
		if p, ok := quoted(item); ok {
			out = append(out, Ban{Pattern: p})
		} else if ps, ok := aliases[item]; ok {
			for _, p := range ps {
				out = append(out, Ban{Pattern: p, As: item})
			}
		} else {
			return nil, fmt.Errorf("%q: want \"nothing\", or paths in backquotes and aliases %q, separated by commas", item, slices.Sorted(maps.Keys(aliases)))
		}
	}
	return out, nil
}

func isTableRow(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "|") }

// cells splits a table row into its trimmed cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	out := strings.Split(row, "|")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// quoted returns s without its backquotes when s is one word in backquotes.
func quoted(s string) (string, bool) {
	in, ok := strings.CutPrefix(s, "`")
	if in, ok2 := strings.CutSuffix(in, "`"); ok && ok2 && in != "" && !strings.ContainsAny(in, "` \t") {
		return in, true
	}
	return "", false
}

// parseDiagram reads the first fenced code block of md as a Diagram of
// the product packages.
func parseDiagram(md string, products map[string]Row) (Diagram, error) {
	d := Diagram{Layer: map[string]int{}, Arrows: map[string][]string{}}
	_, block, ok := strings.Cut(md, "\n```\n")
	block, _, ok2 := strings.Cut(block, "\n```")
	if !ok || !ok2 {
		return d, fmt.Errorf("want a diagram of the layers: a fenced code block")
	}
	layer := 0
	for line := range strings.SplitSeq(block, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, " ") {
			continue
		}
		fields := strings.Split(strings.TrimSpace(line), "  ") // label, then items
		from, arrow := "", false
		for _, f := range fields[1:] {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			from, arrow = "", false // a gap ends an arrow's targets
			for _, w := range strings.Fields(f) {
				w, comma := strings.CutSuffix(w, ",")
				switch {
				case w == "──►":
					arrow = true
				case hasRow(products, w):
					if _, dup := d.Layer[w]; dup {
						return d, fmt.Errorf("the diagram draws %s twice", w)
					}
					d.Layer[w] = layer
					if arrow && from != "" {
						d.Arrows[from] = append(d.Arrows[from], w)
					}
					if !comma || !arrow {
						from, arrow = w, false
					}
				}
			}
		}
		layer++
	}
	for p := range products {
		if _, ok := d.Layer[p]; !ok {
			return d, fmt.Errorf("the diagram does not draw the product package %s", p)
		}
	}
	return d, nil
}

func hasRow(rows map[string]Row, p string) bool { _, ok := rows[p]; return ok }
