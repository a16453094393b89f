package nodes

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestParseBuilders(t *testing.T) {
	yamlFile := `
- platform: linux/amd64
  address: tcp://buildkitd-amd64.build.svc:1234
  tls: {ca: certs/ca.pem, cert: certs/client.pem, key: /abs/client-key.pem, server_name: buildkitd}
- platform: windows
  address: tcp://10.0.0.9:1234
`
	jsonFile := `[{"platform": "linux/amd64", "address": "tcp://buildkitd-amd64.build.svc:1234",
	  "tls": {"ca": "certs/ca.pem", "cert": "certs/client.pem", "key": "/abs/client-key.pem", "server_name": "buildkitd"}},
	 {"platform": "windows", "address": "tcp://10.0.0.9:1234"}]`
	for name, src := range map[string]string{"yaml": yamlFile, "json": jsonFile} {
		path := filepath.Join("/etc/imgctl", "builders."+name)
		nodes, err := ParseBuilders([]byte(src), path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := TLSOptions{CACert: "/etc/imgctl/certs/ca.pem", Cert: "/etc/imgctl/certs/client.pem", Key: "/abs/client-key.pem", ServerName: "buildkitd"}
		if len(nodes) != 2 || nodes[0].Builder.TLS != want || nodes[0].String() != "linux/amd64=tcp://buildkitd-amd64.build.svc:1234" ||
			nodes[1].String() != "windows=tcp://10.0.0.9:1234" || nodes[1].Builder.TLS.enabled() {
			t.Errorf("%s: %+v", name, nodes)
		}
		if s := nodes[1].Builder.String(); s != "tcp://10.0.0.9:1234 (from the builders file "+path+")" {
			t.Errorf("%s: builder %q", name, s)
		}
	}
	for name, src := range map[string]string{
		"unknown key":  "- platform: windows\n  address: tcp://w:1\n  tls: {cacert: ca.pem}\n",
		"no address":   "- platform: windows\n",
		"bad platform": "- platform: linux/\n  address: tcp://w:1\n",
		"tls on unix":  "- platform: windows\n  address: unix:///s\n  tls: {ca: ca.pem}\n",
		"empty":        "[]",
		"not a list":   "platform: windows\n",
	} {
		if _, err := ParseBuilders([]byte(src), "b.yaml"); !errors.Is(err, ErrInvalidNode) && !errors.Is(err, ErrInvalidBuilder) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := LoadBuilders(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, ErrInvalidNode) {
		t.Errorf("missing file: %v", err)
	}
}
