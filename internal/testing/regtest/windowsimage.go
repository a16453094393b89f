package regtest

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WindowsEntrypoint is the default entrypoint of the Windows fixtures.
var WindowsEntrypoint = []string{`C:\app\hello.exe`}

// ForeignLayerURLPrefix prefixes the urls of ForeignLayerImage's base layer;
// the layer digest follows it.
const ForeignLayerURLPrefix = "https://mcr.microsoft.com/v2/windows/nanoserver/blobs/"

// windowsBaseEntries is a base layer shaped like a Windows base image layer:
// registry hives under Files/Windows/System32/config and deltas under Hives.
func windowsBaseEntries(osVersion, seed string) []entry {
	es := []entry{
		{name: "Files/License.txt", data: "Windows container base image " + osVersion + seedSuffix(seed) + "\n"},
		{name: "Files/Windows/"},
		{name: "Files/Windows/System32/"},
		{name: "Files/Windows/System32/cmd.exe", data: "MZ cmd " + osVersion},
		{name: "Files/Windows/System32/config/"},
	}
	for _, h := range []string{"DEFAULT", "SAM", "SECURITY", "SOFTWARE", "SYSTEM"} {
		es = append(es, entry{name: "Files/Windows/System32/config/" + h, data: "regf " + h + " " + osVersion})
	}
	for _, h := range []string{"DefaultUser", "Sam", "Security", "Software", "System"} {
		es = append(es, entry{name: "Hives/" + h + "_Delta", data: "regf " + h + " delta " + osVersion})
	}
	return es
}

func windowsAppLayer(seed string) layerSpec {
	return layerSpec{
		entries: []entry{
			{name: "Files/app/"},
			{name: "Files/app/hello.exe", data: "MZ hello from windows/amd64" + seedSuffix(seed)},
		},
		windows:   true,
		createdBy: `COPY hello.exe C:\app\hello.exe # buildkit`,
	}
}

func windowsDefaults(user string) func(*v1.Config) {
	return func(c *v1.Config) {
		c.Entrypoint, c.Cmd = WindowsEntrypoint, nil
		if c.User == "" {
			c.User = user
		}
	}
}

// WindowsBaseImage returns a Windows base image like mcr.microsoft.com's
// nanoserver: windows/amd64 with os.version osVersion (e.g.
// "10.0.26100.6584"), one layer in the Windows layout, User ContainerUser and
// Cmd cmd.exe. WithBase is ignored; WithSeed changes the layer.
func WindowsBaseImage(osVersion string, opts ...ImageOption) (v1.Image, error) {
	o := newImageOptions(opts)
	base, err := platformImage(v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}, o.docker)
	if err != nil {
		return nil, err
	}
	img, err := appendLayers(base, o, func(c *v1.Config) {
		c.User, c.Cmd = "ContainerUser", []string{`c:\windows\system32\cmd.exe`}
	}, layerSpec{entries: windowsBaseEntries(osVersion, o.seed), windows: true, createdBy: "Apply image " + osVersion})
	if err != nil {
		return nil, fmt.Errorf("making windows base image %s: %w", osVersion, err)
	}
	return img, nil
}

// WindowsImage returns a Windows application image: the layer of
// WindowsBaseImage(osVersion) (or of WithBase) followed by an app layer with
// Files/app/hello.exe, as BuildKit writes it (Hives/ and Files/ entries, PAX
// records MSWINDOWS.fileattr and MSWINDOWS.rawsd). The config has os windows,
// architecture amd64, os.version osVersion, Entrypoint WindowsEntrypoint and
// User ContainerUser. WithSeed changes the app layer only, so that images of
// one osVersion share their base layer.
func WindowsImage(osVersion string, opts ...ImageOption) (v1.Image, error) {
	o := newImageOptions(opts)
	base := o.base
	if base == nil {
		var baseOpts []ImageOption
		if o.docker {
			baseOpts = append(baseOpts, WithDockerMediaTypes())
		}
		var err error
		if base, err = WindowsBaseImage(osVersion, baseOpts...); err != nil {
			return nil, err
		}
	}
	img, err := appendLayers(base, o, windowsDefaults("ContainerUser"), windowsAppLayer(o.seed))
	if err != nil {
		return nil, fmt.Errorf("making windows image %s: %w", osVersion, err)
	}
	return img, nil
}

// HostProcessImage returns a Windows HostProcess image: windows/amd64 with no
// os.version (on purpose, as the HostProcess base image), a base layer with a
// license file and the app layer of WindowsImage; no User is set.
func HostProcessImage(opts ...ImageOption) (v1.Image, error) {
	o := newImageOptions(opts)
	base := o.base
	if base == nil {
		p, err := platformImage(v1.Platform{OS: "windows", Architecture: "amd64"}, o.docker)
		if err != nil {
			return nil, err
		}
		base, err = appendLayers(p, &imageOptions{docker: o.docker}, nil, layerSpec{
			entries:   []entry{{name: "Files/LICENSE", data: "HostProcess container base image\n"}},
			windows:   true,
			createdBy: "COPY LICENSE /LICENSE # buildkit",
		})
		if err != nil {
			return nil, err
		}
	}
	img, err := appendLayers(base, o, windowsDefaults(""), windowsAppLayer(o.seed))
	if err != nil {
		return nil, fmt.Errorf("making hostprocess image: %w", err)
	}
	return img, nil
}

// ForeignLayerImage returns a Windows image as older indexes carry them: Docker
// schema2 media types, and a base layer that is foreign (non-distributable,
// types.DockerForeignLayer) with urls at ForeignLayerURLPrefix+digest. The
// foreign blob itself is never uploaded by remote.Write. With WithBase it is
// WindowsImage with Docker media types.
func ForeignLayerImage(osVersion string, opts ...ImageOption) (v1.Image, error) {
	o := newImageOptions(append(opts, WithDockerMediaTypes()))
	base := o.base
	if base == nil {
		p, err := platformImage(v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: osVersion}, true)
		if err != nil {
			return nil, err
		}
		base, err = appendLayers(p, &imageOptions{docker: true}, func(c *v1.Config) {
			c.User, c.Cmd = "ContainerUser", []string{`c:\windows\system32\cmd.exe`}
		}, layerSpec{
			entries:   windowsBaseEntries(osVersion, ""),
			windows:   true,
			createdBy: "Apply image " + osVersion,
			mediaType: types.DockerForeignLayer,
			urls: func(l v1.Layer) ([]string, error) {
				d, err := l.Digest()
				if err != nil {
					return nil, err
				}
				return []string{ForeignLayerURLPrefix + d.String()}, nil
			},
		})
		if err != nil {
			return nil, err
		}
	}
	img, err := appendLayers(base, o, windowsDefaults("ContainerUser"), windowsAppLayer(o.seed))
	if err != nil {
		return nil, fmt.Errorf("making foreign-layer windows image %s: %w", osVersion, err)
	}
	return img, nil
}
