package sariftest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestSchemaIsOfficial pins the vendored schema to the bytes of
// oasis-tcs/sarif-spec's sarif-2.1/schema/sarif-schema-2.1.0.json.
func TestSchemaIsOfficial(t *testing.T) {
	sum := sha256.Sum256(schemaJSON)
	if got := hex.EncodeToString(sum[:]); got != "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e" {
		t.Errorf("vendored schema sha256 = %s: not the official file", got)
	}
}

// TestValidate checks that the validator accepts a minimal log and rejects
// what the schema forbids, so that a passing CLI test means something.
func TestValidate(t *testing.T) {
	ok := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"imgctl","rules":[{"id":"r"}]}},
	  "results":[{"ruleId":"r","level":"error","message":{"text":"m"},
	    "locations":[{"physicalLocation":{"artifactLocation":{"uri":"Dockerfile"},"region":{"startLine":3}}}]}]}]}`
	if err := Validate([]byte(ok)); err != nil {
		t.Fatalf("a valid log fails: %v", err)
	}
	for name, bad := range map[string]string{
		"no driver name":  `{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}`,
		"wrong version":   `{"version":"2.2","runs":[]}`,
		"unknown level":   strings.Replace(ok, `"error"`, `"fatal"`, 1),
		"line 0":          strings.Replace(ok, `"startLine":3`, `"startLine":0`, 1),
		"unknown field":   strings.Replace(ok, `"runs"`, `"extra":1,"runs"`, 1),
		"message no text": strings.Replace(ok, `{"text":"m"}`, `{}`, 1),
		"not JSON":        `{`,
	} {
		if err := Validate([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
