package lint

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/imgctl/imgctl/findings"
)

// execFormCommands are the instructions whose arguments may be a JSON array.
var execFormCommands = []string{"entrypoint", "cmd", "shell", "run"}

// execFormFindings reports instructions that were meant as exec form but are not
// a valid JSON string array, so BuildKit's parser silently fell back to shell
// form. The returned set holds the reported nodes.
func execFormFindings(ast *parser.Node, file string) ([]findings.Finding, map[*parser.Node]bool) {
	var out []findings.Finding
	skip := map[*parser.Node]bool{}
	stage, index := "", -1
	for _, n := range ast.Children {
		if isCommand(n, "from") {
			index++
			stage = stageNameOf(n, index)
		}
		if !brokenExecForm(n) {
			continue
		}
		skip[n] = true
		name := strings.ToUpper(n.Value)
		out = append(out, findings.Finding{
			Rule:     RuleInvalidExecForm,
			Severity: findings.Error,
			File:     file,
			Line:     n.StartLine,
			Stage:    stage,
			Message: fmt.Sprintf("%s %s looks like exec form but is not a valid JSON string array "+
				"(a backslash must be written as \\\\); BuildKit would run it through a shell", name, n.Next.Value),
		})
	}
	return out, skip
}

// stageNameOf returns the name of the stage a FROM node starts, as BuildKit shows it.
func stageNameOf(from *parser.Node, index int) string {
	var args []string
	for a := from.Next; a != nil; a = a.Next {
		args = append(args, a.Value)
	}
	if len(args) == 3 && strings.EqualFold(args[1], "as") {
		return strings.ToLower(args[2])
	}
	return fmt.Sprintf("stage-%d", index)
}

// brokenExecForm tells whether n is an ENTRYPOINT, CMD, SHELL or RUN whose
// arguments start with '[' but were not parsed as JSON.
func brokenExecForm(n *parser.Node) bool {
	if !isCommand(n, execFormCommands...) || n.Attributes["json"] || n.Next == nil {
		return false
	}
	rest := strings.TrimSpace(n.Next.Value)
	if !strings.HasPrefix(rest, "[") {
		return false
	}
	if !isCommand(n, "run") {
		return true
	}
	// RUN [ -f x ] is the shell's test command: require an array-like shape.
	elems, ok := looseArray(rest)
	if !ok {
		return false
	}
	startsTight := len(rest) > 1 && !unicode.IsSpace(rune(rest[1]))
	return startsTight || elems > 1
}

// looseArray reports whether s has the shape of an array of quoted strings,
// tolerating escapes JSON would reject, and how many elements it has.
func looseArray(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, false
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	elems := 0
	for body != "" {
		q := body[0]
		if q != '"' && q != '\'' {
			return 0, false
		}
		end := closingQuote(body, q)
		if end < 0 {
			return 0, false
		}
		elems++
		body = strings.TrimSpace(body[end+1:])
		if body == "" {
			break
		}
		if body[0] != ',' {
			return 0, false
		}
		body = strings.TrimSpace(body[1:])
	}
	return elems, true
}

// closingQuote returns the index of the quote that ends the string opened at s[0].
func closingQuote(s string, q byte) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return -1
}
