package depcheck

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Architecture is what docs/architecture.md states of the module's
// packages, in two tables: one row per product package with what it may
// import, and one row per test harness.
type Architecture struct {
	// Allowed maps each product package (a path relative to the module) to
	// the module's packages it may import, directly or through others,
	// sorted; empty for "nothing".
	Allowed map[string][]string
	// Harnesses are the test harnesses, benchmarks and examples, sorted: a
	// package is one when its path is one of these or lies below one.
	Harnesses []string
}

// IsHarness reports whether the package at path is a test harness or lies
// below one.
func (a Architecture) IsHarness(path string) bool {
	return slices.ContainsFunc(a.Harnesses, func(h string) bool { return path == h || strings.HasPrefix(path, h+"/") })
}

// ParseArchitecture reads the two tables of md, a Markdown page:
//
//   - the package table, whose header's first cell is "package" and one of
//     whose columns is headed "may import ...": in each row the first cell
//     is one package in backquotes, and the "may import" cell is "nothing"
//     or a comma-separated list of packages in backquotes and names of
//     aliases (e.g. "value packages"), which stand for their packages;
//   - the harness table, whose header's first cell is "harness": in each
//     row the first cell is one path in backquotes.
//
// Anything else in those cells, a package named twice, or a missing table
// is an error naming the line.
func ParseArchitecture(md string, aliases map[string][]string) (Architecture, error) {
	a := Architecture{Allowed: map[string][]string{}}
	var products, harnesses bool
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !isTableRow(lines[i]) {
			continue
		}
		header := cells(lines[i])
		start := i
		for i+1 < len(lines) && isTableRow(lines[i+1]) {
			i++
		}
		if i == start || !strings.HasPrefix(strings.TrimLeft(lines[start+1], "| "), "---") {
			continue // not a table: no | --- | line below the first
		}
		rows := lines[start+2 : i+1] // below the header and its --- line
		first := start + 3           // the line number of rows[0]
		switch header[0] {
		case "package":
			col := slices.IndexFunc(header, func(c string) bool { return strings.HasPrefix(c, "may import") })
			if col < 0 {
				return a, fmt.Errorf("line %d: the package table has no \"may import\" column", start+1)
			}
			products = true
			for j, row := range rows {
				if err := a.addProduct(cells(row), len(header), col, aliases); err != nil {
					return a, fmt.Errorf("line %d: %w", first+j, err)
				}
			}
		case "harness":
			harnesses = true
			for j, row := range rows {
				c := cells(row)
				h, ok := quoted(c[0])
				if !ok || len(c) != len(header) {
					return a, fmt.Errorf("line %d: want %d cells, the first one path in backquotes: %q", first+j, len(header), row)
				}
				if slices.Contains(a.Harnesses, h) {
					return a, fmt.Errorf("line %d: harness %s is listed twice", first+j, h)
				}
				a.Harnesses = append(a.Harnesses, h)
			}
		}
	}
	if !products || !harnesses {
		return a, fmt.Errorf("want a table headed | package | ... | may import ... | and one headed | harness | ... |")
	}
	sort.Strings(a.Harnesses)
	return a, nil
}

func (a Architecture) addProduct(c []string, width, col int, aliases map[string][]string) error {
	if len(c) != width {
		return fmt.Errorf("%d cells, want %d (a | inside a cell?)", len(c), width)
	}
	pkg, ok := quoted(c[0])
	if !ok {
		return fmt.Errorf("the package cell %q is not one package in backquotes", c[0])
	}
	if _, dup := a.Allowed[pkg]; dup {
		return fmt.Errorf("package %s has two rows", pkg)
	}
	allowed := []string{}
	if c[col] != "nothing" {
		for item := range strings.SplitSeq(c[col], ",") {
			item = strings.TrimSpace(item)
			if p, ok := quoted(item); ok {
				allowed = append(allowed, p)
			} else if ps, ok := aliases[item]; ok {
				allowed = append(allowed, ps...)
			} else {
				return fmt.Errorf("%s may import %q: want \"nothing\", or packages in backquotes and %v, separated by commas", pkg, item, slices.Sorted(maps.Keys(aliases)))
			}
		}
	}
	sort.Strings(allowed)
	a.Allowed[pkg] = slices.Compact(allowed)
	return nil
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
