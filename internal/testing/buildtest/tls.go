package buildtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/buildkit/client"
)

// TLSFiles are the PEM files of a TLS daemon: the CA that signed both
// sides, and the client's certificate and key (buildkitd asks for one).
type TLSFiles struct {
	CACert, Cert, Key string
}

// clientOpts are the BuildKit client options for these files.
func (f TLSFiles) clientOpts() []client.ClientOpt {
	if f.CACert == "" {
		return nil
	}
	return []client.ClientOpt{client.WithServerConfig("127.0.0.1", f.CACert), client.WithCredentials(f.Cert, f.Key)}
}

// tlsSetup writes a CA, a server certificate for 127.0.0.1 and a client
// certificate under dir, and returns buildkitd's TLS arguments and the
// client's files.
func tlsSetup(dir string) (args []string, files TLSFiles, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, TLSFiles{}, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "imgctl test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	files.CACert = filepath.Join(dir, "ca.pem")
	if err := writePEM(files.CACert, "CERTIFICATE", caDER); err != nil {
		return nil, TLSFiles{}, err
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (certPath, keyPath string, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", "", err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return "", "", err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return "", "", err
		}
		certPath, keyPath = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return "", "", err
		}
		return certPath, keyPath, writePEM(keyPath, "EC PRIVATE KEY", kder)
	}
	srvCert, srvKey, err := leaf("server", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, TLSFiles{}, fmt.Errorf("server certificate: %w", err)
	}
	if files.Cert, files.Key, err = leaf("client", 3, x509.ExtKeyUsageClientAuth, nil); err != nil {
		return nil, TLSFiles{}, fmt.Errorf("client certificate: %w", err)
	}
	return []string{"--tlscacert", files.CACert, "--tlscert", srvCert, "--tlskey", srvKey}, files, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// freeTCPAddr returns a loopback address with a port that was free a
// moment ago, for buildkitd's --addr.
func freeTCPAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
