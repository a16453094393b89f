package ghactions

import (
	"fmt"
	"os"
	"strings"
)

// AppendSummary appends markdown to the step summary file at path (the
// value of GITHUB_STEP_SUMMARY), creating it if need be. It never
// truncates: every step and every command of a step adds to what is there.
func AppendSummary(path, markdown string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening the step summary: %w", err)
	}
	if _, err := f.WriteString(markdown); err != nil {
		f.Close()
		return fmt.Errorf("writing the step summary: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	return nil
}

// cellEscaper keeps a table cell on its row: a | would end the cell and a
// line break the row.
var cellEscaper = strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>")

// Table renders a GitHub-flavoured Markdown table with a blank line after
// it; every cell is escaped with Cell. No library in imgctl's module graph
// writes Markdown, and a table is a header, a separator and rows.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + Cell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(header)
	b.WriteString("|" + strings.Repeat(" --- |", len(header)) + "\n")
	for _, r := range rows {
		line(r)
	}
	b.WriteString("\n")
	return b.String()
}

// Cell escapes s for a Markdown table cell: | as \| and line breaks as
// <br>.
func Cell(s string) string { return cellEscaper.Replace(s) }
