package policy

import (
	"testing"

	"github.com/imgctl/imgctl/sign"
	"github.com/imgctl/imgctl/verify"
)

func gate(t *testing.T, p *Policy, keys ...string) *Gate {
	t.Helper()
	g, err := NewGate(p, verify.Options{}, keys, sign.ScopeReference)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
