package main

import "strings"

// mdTable is a markdown table that every section of RESULTS.md writes
// through: a header row, its alignment row, then the rows.
type mdTable struct {
	head  []string
	align []string
	rows  [][]string
}

// newTable starts a table with the given columns. A column whose name ends
// in ":" is right-aligned (numbers); the colon is not shown.
func newTable(cols ...string) *mdTable {
	t := &mdTable{}
	for _, c := range cols {
		if n, ok := strings.CutSuffix(c, ":"); ok {
			t.head, t.align = append(t.head, n), append(t.align, "--:")
		} else {
			t.head, t.align = append(t.head, c), append(t.align, "---")
		}
	}
	return t
}

// row adds a row of cells. Missing cells are left empty; cells are
// written as given, so a caller escapes free text with mdEscape.
func (t *mdTable) row(cells ...string) *mdTable {
	t.rows = append(t.rows, cells)
	return t
}

// String renders the table, each line ending in a newline.
func (t *mdTable) String() string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	line(t.head)
	b.WriteString("|" + strings.Join(t.align, "|") + "|\n")
	for _, r := range t.rows {
		if len(r) < len(t.head) {
			r = append(r, make([]string, len(t.head)-len(r))...)
		}
		line(r)
	}
	return b.String()
}
