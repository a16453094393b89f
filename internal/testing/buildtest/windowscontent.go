package buildtest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WindowsContentLayer is a Windows base layer (Files/ and Hives/, PAX
// records as Microsoft's layers carry them) with the shapes a scanner
// meets in mcr.microsoft.com/windows/servercore, at the build and revision
// of osVersion (10.0.BUILD.REV):
//   - native PE files with version resources under Files/Windows/System32
//     (kernel32.dll, ntdll.dll, cmd.exe), file version 10.0.BUILD.REV and
//     Microsoft's strings;
//   - .NET Framework 4.8 assemblies (with a CLR header) and its native
//     runtime under Files/Windows/Microsoft.NET/Framework64/v4.0.30319;
//   - Files/Program Files: Windows Defender's MpCmdRun.exe (its own
//     version line) and Windows PowerShell's module manifests;
//   - License.txt and registry hives.
func WindowsContentLayer(osVersion string) (v1.Layer, error) {
	parts := strings.Split(osVersion, ".")
	if len(parts) != 4 {
		return nil, fmt.Errorf("os.version %q: want 10.0.BUILD.REV", osVersion)
	}
	var v [4]uint16
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("os.version %q: %w", osVersion, err)
		}
		v[i] = uint16(n)
	}
	osFile := func(desc, orig string, dll bool) []byte {
		return PEFile{Strings: map[string]string{
			"CompanyName": "Microsoft Corporation", "FileDescription": desc,
			"FileVersion": osVersion + " (WinBuild.160101.0800)", "InternalName": strings.TrimSuffix(orig, path.Ext(orig)),
			"LegalCopyright": "© Microsoft Corporation. All rights reserved.", "OriginalFilename": orig,
			"ProductName": "Microsoft® Windows® Operating System", "ProductVersion": osVersion,
		}, FileVersion: v, ProductVersion: v, DLL: dll}.Bytes()
	}
	netFx := [4]uint16{4, 8, 4739, 0}
	netFile := func(desc, orig string, clr bool) []byte {
		return PEFile{Strings: map[string]string{
			"CompanyName": "Microsoft Corporation", "FileDescription": desc,
			"FileVersion": "4.8.4739.0 built by: NET481REL1LAST_B", "InternalName": orig,
			"LegalCopyright": "© Microsoft Corporation.  All rights reserved.", "OriginalFilename": orig,
			"ProductName": "Microsoft® .NET Framework", "ProductVersion": "4.8.4739.0", "Assembly Version": "4.0.0.0",
		}, FileVersion: netFx, ProductVersion: netFx, CLR: clr, DLL: true}.Bytes()
	}
	defender := [4]uint16{4, 18, 24090, 11}
	files := []struct {
		name string
		data []byte
	}{
		{"Files/License.txt", []byte("Windows container base image " + osVersion + "\n")},
		{"Files/Windows/System32/kernel32.dll", osFile("Windows NT BASE API Client DLL", "kernel32", true)},
		{"Files/Windows/System32/ntdll.dll", osFile("NT Layer DLL", "ntdll.dll", true)},
		{"Files/Windows/System32/cmd.exe", osFile("Windows Command Processor", "Cmd.Exe", false)},
		{"Files/Windows/System32/config/SOFTWARE", []byte("regf SOFTWARE " + osVersion)},
		{"Files/Windows/Microsoft.NET/Framework64/v4.0.30319/mscorlib.dll", netFile("Microsoft Common Language Runtime Class Library", "mscorlib.dll", true)},
		{"Files/Windows/Microsoft.NET/Framework64/v4.0.30319/System.dll", netFile(".NET Framework", "System.dll", true)},
		{"Files/Windows/Microsoft.NET/Framework64/v4.0.30319/clr.dll", netFile("Microsoft .NET Runtime Common Language Runtime - WorkStation", "clr.dll", false)},
		{"Files/Program Files/Windows Defender/MpCmdRun.exe", PEFile{Strings: map[string]string{
			"CompanyName": "Microsoft Corporation", "FileDescription": "Microsoft Malware Protection Command Line Utility",
			"FileVersion": "4.18.24090.11 (WinBuild.160101.0800)", "OriginalFilename": "MpCmdRun.exe",
			"ProductName": "Microsoft® Windows® Operating System", "ProductVersion": "4.18.24090.11",
		}, FileVersion: defender, ProductVersion: defender}.Bytes()},
		{"Files/Program Files/WindowsPowerShell/Modules/PackageManagement/1.0.0.1/PackageManagement.psd1",
			[]byte("@{\n    ModuleVersion = '1.0.0.1'\n    GUID = '4ae9fd46-338a-459c-8186-07f910774cb8'\n    Author = 'Microsoft Corporation'\n}\n")},
		{"Files/Program Files/WindowsPowerShell/Modules/PowerShellGet/1.0.0.1/PowerShellGet.psd1",
			[]byte("@{\n    ModuleVersion = '1.0.0.1'\n    GUID = '1d73a601-4a6c-43c5-903c-4b1b6a2d8e8d'\n    Author = 'Microsoft Corporation'\n}\n")},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	write := func(h *tar.Header, data []byte) error {
		h.ModTime, h.Format = epoch, tar.FormatPAX
		h.PAXRecords = map[string]string{"MSWINDOWS.fileattr": "16"}
		if h.Typeflag == tar.TypeReg {
			h.PAXRecords["MSWINDOWS.fileattr"] = "32"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := write(&tar.Header{Typeflag: tar.TypeDir, Name: "Hives/", Mode: 0o755}, nil); err != nil {
		return nil, err
	}
	for _, f := range files {
		var parents []string
		for d := path.Dir(f.name); d != "." && !dirs[d]; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
			dirs[d] = true
		}
		for _, d := range parents {
			if err := write(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}, nil); err != nil {
				return nil, err
			}
		}
		if err := write(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data))}, f.data); err != nil {
			return nil, err
		}
	}
	if err := write(&tar.Header{Typeflag: tar.TypeReg, Name: "Hives/Software_Delta", Mode: 0o644, Size: 4}, []byte("regf")); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
}
