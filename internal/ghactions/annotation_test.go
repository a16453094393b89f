package ghactions

import (
	"fmt"
	"strings"
	"testing"
)

// TestEscape pins the escaping of @actions/core's escapeData and
// escapeProperty (toCommandValue of a string is the string).
func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		in, data, property string
	}{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%0A is not a newline", "%250A is not a newline", "%250A is not a newline"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"line1\nline2", "line1%0Aline2", "line1%0Aline2"},
		{"C:\\app\\hello.exe", "C:\\app\\hello.exe", "C%3A\\app\\hello.exe"},
		{"a,b", "a,b", "a%2Cb"},
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
		{"50%,\r\n:", "50%25,%0D%0A:", "50%25%2C%0D%0A%3A"},
	} {
		if got := EscapeData(tc.in); got != tc.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeProperty(tc.in); got != tc.property {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tc.in, got, tc.property)
		}
	}
}

func TestAnnotationString(t *testing.T) {
	for _, tc := range []struct {
		a    Annotation
		want string
	}{
		{Annotation{Level: Error, File: "Dockerfile", Line: 12, Title: "run-in-windows-stage", Message: "RUN in stage final"},
			"::error file=Dockerfile,line=12,title=run-in-windows-stage::RUN in stage final"},
		{Annotation{Level: Warning, File: "deploy/app,v2.yaml", Line: 3, EndLine: 5, Title: "no-memory-limit", Message: "50% of\nnodes"},
			"::warning file=deploy/app%2Cv2.yaml,line=3,endLine=5,title=no-memory-limit::50%25 of%0Anodes"},
		{Annotation{Level: Error, Title: "missing-os-version", Message: "windows/amd64 sha256:abc: no os.version"},
			"::error title=missing-os-version::windows/amd64 sha256:abc: no os.version"},
		{Annotation{Level: "info", Line: 4, Message: "no file, so no line"}, "::notice::no file, so no line"},
	} {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.a, got, tc.want)
		}
	}
}

// TestAnnotateLimit checks that each level shows at most Limit annotations,
// the last of an overflowing level counting the rest, and that levels
// within the limit are untouched.
func TestAnnotateLimit(t *testing.T) {
	var anns []Annotation
	for i := 1; i <= 32; i++ {
		anns = append(anns, Annotation{Level: Error, File: "Dockerfile", Line: i, Title: "r", Message: fmt.Sprintf("e%d", i)})
	}
	for i := 1; i <= 10; i++ {
		anns = append(anns, Annotation{Level: Warning, Title: "w", Message: fmt.Sprintf("w%d", i)})
	}
	anns = append(anns, Annotation{Level: Notice, Message: "n1"})
	var b strings.Builder
	if err := Annotate(&b, anns, Options{SeeAlso: "see the step summary"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var errs, warns, notices []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "::error"):
			errs = append(errs, l)
		case strings.HasPrefix(l, "::warning"):
			warns = append(warns, l)
		case strings.HasPrefix(l, "::notice"):
			notices = append(notices, l)
		default:
			t.Errorf("not a workflow command: %q", l)
		}
	}
	if len(errs) != PerStepLimit || len(warns) != 10 || len(notices) != 1 {
		t.Fatalf("got %d errors, %d warnings, %d notices, want %d, 10, 1:\n%s", len(errs), len(warns), len(notices), PerStepLimit, b.String())
	}
	for i, l := range errs[:PerStepLimit-1] {
		if want := fmt.Sprintf("::error file=Dockerfile,line=%d,title=r::e%d", i+1, i+1); l != want {
			t.Errorf("error annotation %d = %q, want %q", i, l, want)
		}
	}
	if want := "::error title=23 error annotations not shown::... and 23 more findings, see the step summary"; errs[PerStepLimit-1] != want {
		t.Errorf("summarising annotation = %q, want %q", errs[PerStepLimit-1], want)
	}
	if warns[9] != "::warning title=w::w10" {
		t.Errorf("ten warnings fit the limit, the last is %q", warns[9])
	}
}

func TestAnnotateSmallLimit(t *testing.T) {
	anns := []Annotation{{Level: Warning, Message: "a"}, {Level: Warning, Message: "b"}, {Level: Warning, Message: "c"}}
	var b strings.Builder
	if err := Annotate(&b, anns, Options{Limit: 2}); err != nil {
		t.Fatal(err)
	}
	want := "::warning::a\n::warning title=2 warning annotations not shown::... and 2 more findings\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
