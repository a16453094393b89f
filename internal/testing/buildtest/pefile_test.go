package buildtest

import (
	"bytes"
	"debug/pe"
	"testing"
	"unicode/utf16"
)

// TestPEFile: Go's debug/pe reads the file, its resource and CLR
// directories point into its section, and the version strings are there.
func TestPEFile(t *testing.T) {
	for _, clr := range []bool{false, true} {
		raw := PEFile{Strings: map[string]string{"CompanyName": "Microsoft Corporation", "FileVersion": "10.0.20348.2340"},
			FileVersion: [4]uint16{10, 0, 20348, 2340}, CLR: clr, DLL: true}.Bytes()
		f, err := pe.NewFile(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		opt := f.OptionalHeader.(*pe.OptionalHeader64)
		s := f.Section(".rsrc")
		if s == nil || opt.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE].VirtualAddress != s.VirtualAddress {
			t.Fatalf("no resource section")
		}
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		var u []uint16
		for i := 0; i+1 < len(data); i += 2 {
			u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
		}
		text := string(utf16.Decode(u))
		for _, w := range []string{"VS_VERSION_INFO", "StringFileInfo", "CompanyName", "Microsoft Corporation", "10.0.20348.2340"} {
			if !bytes.Contains([]byte(text), []byte(w)) {
				t.Errorf("resource lacks %q", w)
			}
		}
		if got := opt.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].Size != 0; got != clr {
			t.Errorf("CLR header present %v, want %v", got, clr)
		}
	}
}
