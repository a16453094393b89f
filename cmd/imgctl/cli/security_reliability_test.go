package cli

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestCredentialsNeverPrinted: with credentials from DOCKER_CONFIG, basic
// or through a bearer token, and a request that fails (a 500, or a refused
// login), no command prints the password, the token or the encoded
// credentials, with or without --verbose.
func TestCredentialsNeverPrinted(t *testing.T) {
	relFastRetries(t)
	const user, pass, token = "alice", "pw-S3cr3t-9f2c", "tok-S3cr3t-77ab"
	secrets := []string{pass, token, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
	for _, auth := range []string{"basic", "bearer", "wrong-password"} {
		for _, c := range relCommands(nil) {
			for _, verbose := range []bool{false, true} {
				t.Run(auth+"/"+c.name+"/verbose="+strconv.FormatBool(verbose), func(t *testing.T) {
					reg := regtest.New(t)
					c := relCommands(relFixture(t, reg))[relIndexOf(c.name)]
					login := pass
					if auth == "wrong-password" {
						login = pass + "-wrong"
					}
					t.Setenv("DOCKER_CONFIG", regtest.WriteDockerConfig(t, reg.Host(), user, login))
					gate := regtest.RequireBasic(user, pass)
					if auth == "bearer" {
						gate = (&regtest.BearerAuth{Token: token, User: user, Password: pass}).Middleware
					}
					faults := regtest.NewFaults(regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifest, Method: http.MethodGet})
					reg.SetMiddleware(func(h http.Handler) http.Handler { return gate(faults.Middleware(h)) })
					args := c.args(reg, "secret")
					if verbose {
						args = append(args, "--verbose")
					}
					out, errOut, code := run(t, args...)
					leaked := ""
					for _, s := range secrets {
						if strings.Contains(out+errOut, s) {
							leaked = s
						}
					}
					ok := code == ExitError && leaked == ""
					regtest.LogBadInput(t, "credentials-"+auth+"-failing-request", c.name, code, ok)
					if !ok {
						t.Errorf("exit %d, leaked %q\n%s\n%s", code, leaked, out, errOut)
					}
				})
			}
		}
	}
}
