package buildtest

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1"
)

// NonrootUID is the uid and gid of the nonroot user of DistrolessLike.
const NonrootUID = 65532

const passwd = `root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
`

const group = `root:x:0:
nobody:x:65534:
nonroot:x:65532:
`

// DistrolessLike returns a base like gcr.io/distroless/static-debian12:nonroot
// for linux/arch ("amd64", or "arm64" with variant v8): /etc/passwd and
// /etc/group with the nonroot user 65532, /tmp, /home/nonroot, and config
// User 65532. It has no shell.
func DistrolessLike(arch string) (v1.Image, error) {
	p := v1.Platform{OS: "linux", Architecture: arch}
	if arch == "arm64" {
		p.Variant = "v8"
	}
	layer, err := memLayer(func(w tarWriter) error {
		for _, d := range []string{"etc", "home", "root", "tmp"} {
			mode := int64(0o755)
			if d == "tmp" {
				mode = 0o1777
			}
			if err := w.dir(d, mode); err != nil {
				return err
			}
		}
		if err := w.tw.WriteHeader(nonrootHome()); err != nil {
			return err
		}
		if err := w.file("etc/group", 0o644, []byte(group)); err != nil {
			return err
		}
		return w.file("etc/passwd", 0o644, []byte(passwd))
	})
	if err != nil {
		return nil, fmt.Errorf("making distroless-like layer: %w", err)
	}
	return newImage(p, v1.Config{
		User:       fmt.Sprint(NonrootUID),
		WorkingDir: "/home/nonroot",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
	}, layer)
}
