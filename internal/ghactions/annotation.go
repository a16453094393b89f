package ghactions

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Level is the workflow command an annotation is written with.
type Level string

// The annotation levels, most severe first.
const (
	Error   Level = "error"
	Warning Level = "warning"
	Notice  Level = "notice"
)

// levels is the order in which Annotate reports overflow.
var levels = []Level{Error, Warning, Notice}

// PerStepLimit is how many annotations of each level GitHub shows for one
// step (10 errors, 10 warnings and 10 notices; 50 in all per job); the
// runner drops the rest silently.
const PerStepLimit = 10

// Annotation is one workflow command that annotates a file and line, or
// the run when File is empty.
type Annotation struct {
	Level Level
	// File is relative to the repository root; "" for none.
	File string
	// Line and EndLine are 1-based; 0 for none. Line counts only with File.
	Line, EndLine int
	// Title is the annotation's heading: imgctl puts the rule there.
	Title   string
	Message string
}

// String formats the annotation as the runner parses it:
// ::LEVEL file=F,line=N,endLine=M,title=T::MESSAGE, properties escaped
// with EscapeProperty and the message with EscapeData. Empty properties
// are left out.
func (a Annotation) String() string {
	var props []string
	add := func(k, v string) {
		if v != "" {
			props = append(props, k+"="+EscapeProperty(v))
		}
	}
	add("file", a.File)
	if a.File != "" && a.Line > 0 {
		add("line", strconv.Itoa(a.Line))
		if a.EndLine >= a.Line {
			add("endLine", strconv.Itoa(a.EndLine))
		}
	}
	add("title", a.Title)
	cmd := "::" + string(level(a))
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + EscapeData(a.Message)
}

// dataEscaper is @actions/core's escapeData: the runner unescapes these in
// a command's message.
var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// propertyEscaper is @actions/core's escapeProperty: escapeData, and the
// separators of the property list.
var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// EscapeData escapes a workflow command's message: % as %25, CR as %0D
// and LF as %0A.
func EscapeData(s string) string { return dataEscaper.Replace(s) }

// EscapeProperty escapes a workflow command's property value: as
// EscapeData, and : as %3A and , as %2C.
func EscapeProperty(s string) string { return propertyEscaper.Replace(s) }

// Options tune Annotate.
type Options struct {
	// Limit is the most annotations of one level written; 0 means
	// PerStepLimit.
	Limit int
	// SeeAlso says where the annotations left out can be read, e.g. "see
	// the step summary"; it ends the summarising annotation.
	SeeAlso string
}

// Annotate writes anns to w, one workflow command a line, in their order
// but at most Limit of each level: a level with more gets its first
// Limit-1 and one annotation of that level, "... and N more findings",
// that counts the rest, so that the runner shows it.
func Annotate(w io.Writer, anns []Annotation, o Options) error {
	limit := o.Limit
	if limit <= 0 {
		limit = PerStepLimit
	}
	total := map[Level]int{}
	for _, a := range anns {
		total[level(a)]++
	}
	written := map[Level]int{}
	var b strings.Builder
	for _, a := range anns {
		l := level(a)
		if total[l] > limit && written[l] >= limit-1 {
			continue
		}
		written[l]++
		b.WriteString(a.String() + "\n")
	}
	for _, l := range levels {
		if rest := total[l] - written[l]; rest > 0 {
			msg := fmt.Sprintf("... and %d more findings", rest)
			if o.SeeAlso != "" {
				msg += ", " + o.SeeAlso
			}
			b.WriteString(Annotation{Level: l, Title: fmt.Sprintf("%d %s annotations not shown", rest, l), Message: msg}.String() + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// level is the annotation's Level; anything but Error and Warning is a
// Notice.
func level(a Annotation) Level {
	switch a.Level {
	case Error, Warning:
		return a.Level
	}
	return Notice
}
