// Package remote stands in for go-containerregistry's: what depcheck's
// rules look for is its import path and its names.
package remote

import "net/http"

// Option stands in for a remote option.
type Option func()

// WithTransport stands in for the option that sets the transport.
func WithTransport(http.RoundTripper) Option { return func() {} }

// Write stands in for the write of an image.
func Write(string, ...Option) error { return nil }
