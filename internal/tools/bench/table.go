package main

import (
	"fmt"
	"strings"
)

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

// row adds a row of cells, each formatted with fmt.Sprint and written as
// is (a caller escapes free text with mdEscape). A short row, such as a
// name and "failed: ...", ends with one empty cell per missing column.
func (t *mdTable) row(cells ...any) *mdTable {
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, r)
	return t
}

// bold is n in bold, the figure a table's goal is judged on.
func bold[T int | int64](n T) string { return fmt.Sprintf("**%d**", n) }

// String renders the table, each line ending in a newline.
func (t *mdTable) String() string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString(strings.Repeat("|", max(0, len(t.head)-len(cells))) + "\n")
	}
	line(t.head)
	b.WriteString("|" + strings.Join(t.align, "|") + "|\n")
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}
