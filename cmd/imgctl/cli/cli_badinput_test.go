package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// relRun is run that turns a panic into a test failure with the input named.
func relRun(t *testing.T, args ...string) (out, errOut string, code int) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("imgctl %q panicked: %v", args, p)
			code = -1
		}
	}()
	var o, e bytes.Buffer
	code = Execute(context.Background(), args, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// badIndex is an index built by hand from the good fixture's descriptors,
// changed by edit.
func badIndex(t *testing.T, edit func(m map[string]any, descs []map[string]any)) []byte {
	t.Helper()
	im := regtest.Must(regtest.Must(regtest.MultiOSIndex())(t).IndexManifest())(t)
	raw := regtest.Must(json.Marshal(im))(t)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var descs []map[string]any
	for _, d := range m["manifests"].([]any) {
		descs = append(descs, d.(map[string]any))
	}
	edit(m, descs)
	return regtest.Must(json.Marshal(m))(t)
}

// badInput is one malformed registry content, served as bad/app:1.
type badInput struct {
	name string
	// serve registers the content; images are the good fixture's children.
	serve func(t *testing.T, raw *regtest.RawContent)
	// verifyExit and verifyMsg are what verify must answer.
	verifyExit int
	verifyMsg  string
}

const ociIndex, ociManifest = string(types.OCIImageIndex), string(types.OCIManifestSchema1)

func indexCase(name string, exit int, msg string, edit func(m map[string]any, descs []map[string]any)) badInput {
	return badInput{name: name, verifyExit: exit, verifyMsg: msg, serve: func(t *testing.T, raw *regtest.RawContent) {
		raw.Manifest("src", "bad", ociIndex, badIndex(t, edit))
	}}
}

// childCase serves an index whose first entry is a raw manifest.
func childCase(name string, exit int, msg string, manifest func(raw *regtest.RawContent) []byte) badInput {
	return badInput{name: name, verifyExit: exit, verifyMsg: msg, serve: func(t *testing.T, raw *regtest.RawContent) {
		body := manifest(raw)
		h := raw.Manifest("src", "child", ociManifest, body)
		raw.Manifest("src", "bad", ociIndex, badIndex(t, func(_ map[string]any, d []map[string]any) {
			d[0]["digest"], d[0]["size"] = h.String(), len(body)
		}))
	}}
}

func badInputs() []badInput {
	goodCfg := `{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{}}`
	manifestWith := func(raw *regtest.RawContent, cfg string, size int) []byte {
		h := raw.Blob("src", []byte(cfg))
		if size == 0 {
			size = len(cfg)
		}
		return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[]}`, ociManifest, h, size)
	}
	return []badInput{
		{name: "malformed-json-index", verifyExit: 2, verifyMsg: "reading index: unexpected EOF", serve: func(_ *testing.T, raw *regtest.RawContent) {
			raw.Manifest("src", "bad", ociIndex, []byte(`{"schemaVersion":2,"mediaType":"`+ociIndex+`","manifests":[{`))
		}},
		childCase("malformed-json-manifest", 2, "reading manifest: unexpected EOF", func(*regtest.RawContent) []byte {
			return []byte(`{"schemaVersion":2,"config":`)
		}),
		childCase("malformed-json-config", 2, "config", func(raw *regtest.RawContent) []byte {
			return manifestWith(raw, `{"os":`, 0)
		}),
		childCase("wrong-config-size", 2, "size", func(raw *regtest.RawContent) []byte {
			return manifestWith(raw, goodCfg, 7)
		}),
		childCase("negative-config-size", 2, "size", func(raw *regtest.RawContent) []byte {
			return manifestWith(raw, goodCfg, -5)
		}),
		{name: "unknown-media-type", verifyExit: 2, verifyMsg: "unsupported media type", serve: func(_ *testing.T, raw *regtest.RawContent) {
			raw.Manifest("src", "bad", "application/vnd.example.thing+json", []byte(`{"schemaVersion":2}`))
		}},
		// verify does not open children it cannot read, as engines skip
		// them; index create refuses them.
		indexCase("unknown-child-media-type", 0, "", func(_ map[string]any, d []map[string]any) {
			for _, x := range d[:4] {
				x["mediaType"] = "application/vnd.example.unknown+json"
			}
		}),
		indexCase("oversized-manifest", 2, "manifest too large", func(m map[string]any, _ []map[string]any) {
			m["annotations"] = map[string]string{"pad": strings.Repeat("x", 5<<20)}
		}),
		indexCase("negative-descriptor-size", 2, "size", func(_ map[string]any, d []map[string]any) { d[0]["size"] = -1 }),
		indexCase("wrong-descriptor-size", 2, "size", func(_ map[string]any, d []map[string]any) { d[0]["size"] = 3 }),
		indexCase("sha512-digest", 2, "", func(_ map[string]any, d []map[string]any) {
			d[0]["digest"] = "sha512:" + strings.Repeat("ab", 64)
		}),
		indexCase("md5-digest", 2, "", func(_ map[string]any, d []map[string]any) {
			d[0]["digest"] = "md5:d41d8cd98f00b204e9800998ecf8427e"
		}),
		indexCase("os-version-garbage", 1, "malformed-os-version", func(_ map[string]any, d []map[string]any) {
			for i, v := range []string{"10.0.abc.1", "\u202e10.0.26100.1", "99999999999999999999.0.26100.1"} {
				d[2+i%2]["platform"].(map[string]any)["os.version"] = v
			}
		}),
	}
}

// TestBadRegistryContent: every command answers each malformed content
// with a clear error and an exit code of the contract, never a panic.
func TestBadRegistryContent(t *testing.T) {
	relFastRetries(t)
	for _, bi := range badInputs() {
		t.Run(bi.name, func(t *testing.T) {
			reg := regtest.New(t)
			relFixture(t, reg)
			raw := &regtest.RawContent{}
			bi.serve(t, raw)
			reg.SetMiddleware(raw.Middleware)
			bad := reg.Host() + "/src:bad"
			for _, args := range [][]string{
				{"verify", bad},
				{"resolve", bad, "--platform", "windows/amd64:10.0.26100.1"},
				{"inspect", bad},
				{"index", "create", "-t", reg.Host() + "/out/" + bi.name + ":1", bad},
				{"index", "remove", "-t", reg.Host() + "/rm/" + bi.name + ":1", "--platform", "linux/arm64", bad},
			} {
				out, errOut, code := relRun(t, args...)
				ok := code >= 0 && code <= 2 && (code != ExitError || strings.HasPrefix(errOut, "imgctl: "))
				if args[0] == "verify" {
					ok = ok && code == bi.verifyExit && strings.Contains(out+errOut, bi.verifyMsg)
					t.Logf("verify exit %d: %.200s", code, strings.TrimSpace(errOut))
				}
				name := args[0]
				if name == "index" {
					name += "-" + args[1]
				}
				regtest.LogBadInput(t, bi.name, name, code, ok)
				if !ok {
					t.Errorf("%s: exit %d\n%s\n%s", name, code, out, errOut)
				}
			}
		})
	}
}

// TestBadPlatformFlags: odd platform and target strings are usage errors.
func TestBadPlatformFlags(t *testing.T) {
	reg := regtest.New(t)
	relFixture(t, reg)
	ref := reg.Host() + "/" + relAppRef
	for _, tc := range []struct{ name, p string }{
		{"nul", "linux/amd64\x00"}, {"right-to-left-override", "windows/amd64:10.0.\u202e"},
		{"nul-in-version", "windows/amd64:10.0.26100.1\x00"}, {"100k-long", strings.Repeat("linux/", 20000) + "amd64"},
		{"10k-digit-version", "windows/amd64:" + strings.Repeat("9", 10000)}, {"nul-containerd-form", "windows(10.0.20348\x00)/amd64"},
		{"slash", "/"}, {"colon", ":"}, {"empty-version-part", "windows/amd64:10..0.1"}, {"dot-dot", "linux/AMD64/../.."},
		{"parentheses", "windows(((/amd64"}, {"linux-with-version", "linux(10.0.20348)/amd64"},
	} {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"resolve", []string{"resolve", ref, "--platform", tc.p}},
			{"verify-require-platform", []string{"verify", ref, "--require-platform", tc.p}},
			{"verify-target", []string{"verify", ref, "--windows", tc.p}},
			{"index-remove", []string{"index", "remove", "-t", reg.Host() + "/rm:1", "--platform", tc.p, ref}},
		} {
			out, errOut, code := relRun(t, c.args...)
			ok := code == ExitError && strings.Contains(errOut, "usage") && len(errOut) < 200_000
			regtest.LogBadInput(t, "platform-"+tc.name, c.name, code, ok)
			if !ok {
				t.Errorf("%s %s: exit %d\n%s\n%.300s", tc.name, c.name, code, out, errOut)
			}
		}
	}
}
