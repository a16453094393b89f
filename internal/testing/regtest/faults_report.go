package regtest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LogFault logs the machine-readable line scripts/reliability counts for
// one fault injected into one command:
// "RELIABILITY type=fault fault=500 command=verify injected=2 survived=true".
// survived means the command behaved as the contract says: it completed
// after transient faults, or failed cleanly with exit 2 under persistent
// ones.
func LogFault(t testing.TB, fault, command string, injected int, survived bool) {
	t.Helper()
	t.Logf("RELIABILITY type=fault fault=%s command=%s injected=%d survived=%t", token(fault), token(command), injected, survived)
}

// LogBadInput logs the line for one bad input given to one command:
// "RELIABILITY type=badinput input=malformed-json command=verify exit=2 ok=true".
func LogBadInput(t testing.TB, input, command string, exit int, ok bool) {
	t.Helper()
	t.Logf("RELIABILITY type=badinput input=%s command=%s exit=%d ok=%t", token(input), token(command), exit, ok)
}

// LogMetric logs a measured figure: "RELIABILITY type=metric name=... value=...".
func LogMetric(t testing.TB, name, value string) {
	t.Helper()
	t.Logf("RELIABILITY type=metric name=%s value=%s", token(name), token(value))
}

// token makes s one space-free field.
func token(s string) string {
	s = strings.Join(strings.Fields(s), "-")
	if s == "" {
		return "-"
	}
	return s
}

// WriteDockerConfig writes a Docker config.json with basic credentials for
// registry host into a temporary directory, and returns the directory, for
// DOCKER_CONFIG.
func WriteDockerConfig(t testing.TB, host, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
