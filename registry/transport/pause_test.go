package transport

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPausesPerRegistry: a Retry-After recorded for one registry holds
// back every request to it (a canceled wait fails instead of passing) and
// none to another registry.
func TestPausesPerRegistry(t *testing.T) {
	var p pauses
	p.hold("a.example:5000", time.Hour)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.wait(canceled, "a.example:5000"); !errors.Is(err, context.Canceled) {
		t.Errorf("a request to the paused registry: %v, want it held until canceled", err)
	}
	if err := p.wait(canceled, "b.example:5000"); err != nil {
		t.Errorf("a request to another registry: %v, want it through", err)
	}
	p.hold("a.example:5000", -time.Second) // an earlier end never shortens a pause
	if err := p.wait(canceled, "a.example:5000"); !errors.Is(err, context.Canceled) {
		t.Errorf("after a shorter Retry-After: %v, want the longer pause kept", err)
	}
}
