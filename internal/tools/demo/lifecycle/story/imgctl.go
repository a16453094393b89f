package story

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// imgctl's documented exit codes (docs/commands.md), which the CLI
// contract fixes; the story checks them.
const (
	exitOK       = 0 // passed
	exitFindings = 1 // the check failed: findings, or nothing matches
	exitError    = 2 // usage, network or registry error
)

// imgctl runs the CLI (Config.Imgctl), as the binary runs it, showing the
// command line (temporary and module paths made relative) and its output.
// It returns the exit code.
func (s *story) imgctl(args ...string) int {
	fmt.Fprintf(s.w, "\n$ imgctl %s\n", s.display.Replace(strings.Join(args, " ")))
	return s.run(s.ctx, args, strings.NewReader(password+"\n"), s.w, s.w)
}

// expect runs imgctl and fails unless it exits want.
func (s *story) expect(want int, args ...string) error {
	if code := s.imgctl(args...); code != want {
		return fmt.Errorf("imgctl %s exited %d, want %d", args[0], code, want)
	}
	return nil
}

// query runs imgctl with -o json without showing it and returns its
// output; it fails unless imgctl exits 0 (exitOK). Standard input holds
// the key's password, for patch --key.
func (s *story) query(args ...string) ([]byte, error) {
	var out, errOut bytes.Buffer
	if code := s.run(s.ctx, append(args, "-o", "json"), strings.NewReader(password+"\n"), &out, &errOut); code != exitOK {
		return nil, fmt.Errorf("imgctl %s exited %d: %s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.Bytes(), nil
}

// queryJSON is query decoding the output into v.
func (s *story) queryJSON(v any, args ...string) error {
	out, err := s.query(args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("decoding imgctl %s -o json: %w", args[0], err)
	}
	return nil
}
