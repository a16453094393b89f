package regtest

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// TokenPath is where a BearerAuth registry serves its token endpoint.
// go-containerregistry accepts a plain-HTTP or loopback realm only on the
// registry's own host:port, so the registry serves it itself.
const TokenPath = "/token"

// BearerAuth makes a registry answer 401 with
// `WWW-Authenticate: Bearer realm="http://HOST/token",service=...` to every
// request without `Authorization: Bearer <Token>`, and serves the token
// endpoint, which hands out Token to anyone or, when User is set, only to
// requests with those basic credentials.
type BearerAuth struct {
	// Token is the token handed out; User and Password, when User is set,
	// the basic credentials required to get it; Service the challenge's
	// service.
	Token, User, Password, Service string

	requests atomic.Int64
}

// TokenRequests returns how many token requests the endpoint has served.
func (b *BearerAuth) TokenRequests() int64 { return b.requests.Load() }

// Middleware wraps a registry handler with the challenge and the token
// endpoint.
func (b *BearerAuth) Middleware(next http.Handler) http.Handler {
	want := "Bearer " + b.Token
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == TokenPath:
			b.serveToken(w, r)
		case subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1:
			next.ServeHTTP(w, r)
		default:
			realm := "http://" + r.Host + TokenPath
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service=%q`, realm, b.Service))
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
		}
	})
}

func (b *BearerAuth) serveToken(w http.ResponseWriter, r *http.Request) {
	b.requests.Add(1)
	if b.User != "" && !basicOK(r, b.User, b.Password) {
		w.Header().Set("WWW-Authenticate", `Basic realm="regtest-token"`)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "token endpoint: bad credentials")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token": b.Token, "access_token": b.Token, "expires_in": 300})
}

// RequireBasic returns a middleware that answers 401 with a Basic
// challenge to every request without those credentials.
func RequireBasic(user, password string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if basicOK(r, user, password) {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="regtest"`)
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
		})
	}
}

func basicOK(r *http.Request, user, password string) bool {
	u, p, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1 &&
		subtle.ConstantTimeCompare([]byte(p), []byte(password)) == 1
}
