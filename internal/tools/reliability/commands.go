package main

import (
	"context"
	"os/exec"
	"strings"
)

// listCommands returns the verbs `imgctl --help` lists, without help and
// completion.
func listCommands(ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, "go", "run", "./cmd/imgctl", "--help").Output()
	if err != nil {
		return nil
	}
	_, rest, ok := strings.Cut(string(out), "Available Commands:\n")
	if !ok {
		return nil
	}
	var cmds []string
	for line := range strings.Lines(rest) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(line, "  ") {
			break
		}
		if f[0] != "help" && f[0] != "completion" {
			cmds = append(cmds, f[0])
		}
	}
	return cmds
}

// uncovered returns the commands with no record of type typ.
func (r *report) uncovered(typ string) []string {
	var out []string
	for _, c := range r.commands {
		found := false
		for _, rec := range r.of(typ) {
			if rec["command"] == c || strings.HasPrefix(rec["command"], c+"-") {
				found = true
				break
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}
