package disttest

import "net/http"

// tokenAuth is the bearer-token handshake that Options.Token puts in front
// of the registry. distribution's own token auth needs a separate JWT token
// server with its signing certificate; instead the proxy runs
// regtest.BearerAuth (the challenge and the token endpoint that the
// in-process registry's token tests use) and forwards what it let through
// to distribution with the htpasswd credentials, so that the registry
// underneath is the same and a client pays a token registry's handshake.
func (r *Registry) tokenAuth(next http.Handler) http.Handler {
	return r.bearer.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req.Header.Del("Authorization")
		req.SetBasicAuth(r.user, r.password)
		next.ServeHTTP(w, req)
	}))
}

// TokenRequests returns how many token requests the proxy's token endpoint
// has served (including refused ones); 0 without Options.Token.
func (r *Registry) TokenRequests() int64 {
	if r.bearer == nil {
		return 0
	}
	return r.bearer.TokenRequests()
}
