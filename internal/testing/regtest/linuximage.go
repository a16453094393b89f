package regtest

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// LinuxImage returns a small Linux image for arch ("amd64", "arm64" gets
// variant "v8") with one layer holding app/hello, whose bytes differ per
// arch and seed. The entrypoint is /app/hello; media types are OCI.
func LinuxImage(arch string, opts ...ImageOption) (v1.Image, error) {
	o := newImageOptions(opts)
	base := o.base
	if base == nil {
		p := v1.Platform{OS: "linux", Architecture: arch}
		if arch == "arm64" {
			p.Variant = "v8"
		}
		var err error
		if base, err = platformImage(p, o.docker); err != nil {
			return nil, err
		}
	}
	img, err := appendLayers(base, o, func(c *v1.Config) {
		c.Entrypoint, c.Cmd = []string{"/app/hello"}, nil
	}, layerSpec{
		entries: []entry{
			{name: "app/"},
			{name: "app/hello", data: fmt.Sprintf("hello from linux/%s%s\n", arch, seedSuffix(o.seed))},
		},
		createdBy: "COPY hello /app/hello # buildkit",
	})
	if err != nil {
		return nil, fmt.Errorf("making linux/%s image: %w", arch, err)
	}
	return img, nil
}

func seedSuffix(seed string) string {
	if seed == "" {
		return ""
	}
	return " seed=" + seed
}

// LinuxIndex returns an index of LinuxImage("amd64") and
// LinuxImage("arm64"), with opts given to both, and the two images in
// that order.
func LinuxIndex(opts ...ImageOption) (idx v1.ImageIndex, images []v1.Image, err error) {
	var entries []Entry
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := LinuxImage(arch, opts...)
		if err != nil {
			return nil, nil, err
		}
		images = append(images, img)
		entries = append(entries, Entry{Image: img})
	}
	if idx, err = Index(entries...); err != nil {
		return nil, nil, err
	}
	return idx, images, nil
}
