package buildtest

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"slices"
	"unicode/utf16"
)

// PEFile describes a Windows portable executable for content-shaped test
// bases: its version resource (VS_VERSIONINFO, the strings Windows shows
// in a file's Details tab) and, for a .NET assembly, a CLR header.
type PEFile struct {
	// Strings are the StringFileInfo entries (CompanyName, FileDescription,
	// FileVersion, ProductName, ProductVersion, OriginalFilename, ...).
	Strings map[string]string
	// FileVersion and ProductVersion are VS_FIXEDFILEINFO's, major first.
	FileVersion, ProductVersion [4]uint16
	// CLR makes the file a .NET assembly: a COM descriptor (CLR 2.5
	// runtime header) in the data directory, as every managed assembly has.
	CLR bool
	// DLL marks the image a DLL.
	DLL bool
}

// Bytes writes the file: a PE32+ (amd64) image with one .rsrc section
// holding the version resource (type RT_VERSION, id 1, language 0x0409) and
// the CLR header. It has no code: scanners read headers and resources, and
// nothing runs it. Layout from Microsoft's PE format and VS_VERSIONINFO
// documentation; debug/pe reads it back in the tests.
func (f PEFile) Bytes() []byte {
	const (
		fileAlign = 0x200
		sectAlign = 0x1000
		rsrcRVA   = 0x1000
	)
	vi := f.versionInfo()
	var sec bytes.Buffer
	// Three directory levels (type, name, language), each one ID entry,
	// then the data entry and the data, 8-byte aligned.
	dir := func(entryName, offset uint32) {
		_ = binary.Write(&sec, binary.LittleEndian, [4]uint32{0, 0, 0, 1 << 16}) // characteristics, time, version; 0 named, 1 ID entry
		_ = binary.Write(&sec, binary.LittleEndian, [2]uint32{entryName, offset})
	}
	dir(16, 0x80000000|0x18) // RT_VERSION
	dir(1, 0x80000000|0x30)  // VS_VERSION_INFO id
	dir(0x0409, 0x48)        // en-US: a data entry
	dataRVA := uint32(rsrcRVA + 0x58)
	_ = binary.Write(&sec, binary.LittleEndian, [4]uint32{dataRVA, uint32(len(vi)), 0, 0})
	sec.Write(make([]byte, 0x58-sec.Len()))
	sec.Write(vi)
	rsrcSize := uint32(sec.Len())
	var clrRVA uint32
	if f.CLR {
		pad(&sec, 8)
		clrRVA = rsrcRVA + uint32(sec.Len())
		// IMAGE_COR20_HEADER: cb, MajorRuntimeVersion 2, MinorRuntimeVersion 5, the rest zero.
		hdr := make([]byte, 72)
		binary.LittleEndian.PutUint32(hdr[0:], 72)
		binary.LittleEndian.PutUint16(hdr[4:], 2)
		binary.LittleEndian.PutUint16(hdr[6:], 5)
		binary.LittleEndian.PutUint32(hdr[16:], 1) // COMIMAGE_FLAGS_ILONLY
		sec.Write(hdr)
	}
	virtualSize := uint32(sec.Len())
	pad(&sec, fileAlign)

	var out bytes.Buffer
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	out.Write(dos)
	out.WriteString("PE\x00\x00")
	chars := uint16(pe.IMAGE_FILE_EXECUTABLE_IMAGE | pe.IMAGE_FILE_LARGE_ADDRESS_AWARE)
	if f.DLL {
		chars |= pe.IMAGE_FILE_DLL
	}
	_ = binary.Write(&out, binary.LittleEndian, pe.FileHeader{Machine: pe.IMAGE_FILE_MACHINE_AMD64, NumberOfSections: 1,
		SizeOfOptionalHeader: uint16(binary.Size(pe.OptionalHeader64{})), Characteristics: chars})
	opt := pe.OptionalHeader64{
		Magic: 0x20b, MajorLinkerVersion: 14, ImageBase: 0x180000000, SectionAlignment: sectAlign, FileAlignment: fileAlign,
		MajorOperatingSystemVersion: 10, MajorSubsystemVersion: 10, SizeOfImage: rsrcRVA + align(virtualSize, sectAlign),
		SizeOfHeaders: fileAlign, Subsystem: pe.IMAGE_SUBSYSTEM_WINDOWS_CUI, SizeOfStackReserve: 0x100000, SizeOfStackCommit: 0x1000,
		SizeOfHeapReserve: 0x100000, SizeOfHeapCommit: 0x1000, NumberOfRvaAndSizes: 16,
	}
	opt.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE] = pe.DataDirectory{VirtualAddress: rsrcRVA, Size: rsrcSize}
	if f.CLR {
		opt.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR] = pe.DataDirectory{VirtualAddress: clrRVA, Size: 72}
	}
	_ = binary.Write(&out, binary.LittleEndian, opt)
	var name [8]uint8
	copy(name[:], ".rsrc")
	_ = binary.Write(&out, binary.LittleEndian, pe.SectionHeader32{Name: name, VirtualSize: virtualSize, VirtualAddress: rsrcRVA,
		SizeOfRawData: uint32(sec.Len()), PointerToRawData: fileAlign, Characteristics: 0x40000040}) // initialised data, readable
	pad(&out, fileAlign)
	out.Write(sec.Bytes())
	return out.Bytes()
}

// versionInfo is the VS_VERSIONINFO block.
func (f PEFile) versionInfo() []byte {
	var fixed bytes.Buffer
	fv, pv := f.FileVersion, f.ProductVersion
	_ = binary.Write(&fixed, binary.LittleEndian, [13]uint32{
		0xFEEF04BD, 0x00010000,
		uint32(fv[0])<<16 | uint32(fv[1]), uint32(fv[2])<<16 | uint32(fv[3]),
		uint32(pv[0])<<16 | uint32(pv[1]), uint32(pv[2])<<16 | uint32(pv[3]),
		0x3F, 0, 0x00040004, 2, 0, 0, 0, // flags mask, flags, VOS_NT_WINDOWS32, VFT_DLL
	})
	var strs []viNode
	for _, k := range sortedKeys(f.Strings) {
		strs = append(strs, viNode{key: k, text: f.Strings[k]})
	}
	root := viNode{key: "VS_VERSION_INFO", value: fixed.Bytes(), children: []viNode{
		{key: "StringFileInfo", children: []viNode{{key: "040904B0", children: strs}}},
		{key: "VarFileInfo", children: []viNode{{key: "Translation", value: []byte{0x09, 0x04, 0xB0, 0x04}}}},
	}}
	return root.bytes()
}

// viNode is one block of a version resource: a key, a binary value or a
// text value, and children.
type viNode struct {
	key      string
	value    []byte
	text     string
	children []viNode
}

func (n viNode) bytes() []byte {
	var b bytes.Buffer
	b.Write(make([]byte, 6)) // wLength, wValueLength, wType
	b.Write(utf16z(n.key))
	pad(&b, 4)
	valueLen, typ := uint16(len(n.value)), uint16(0)
	if n.text != "" || (n.value == nil && n.children == nil) {
		t := utf16z(n.text)
		valueLen, typ = uint16(len(t)/2), 1 // in WORDs, with the terminator
		b.Write(t)
	} else {
		b.Write(n.value)
		if n.value == nil {
			typ = 1
		}
	}
	for _, c := range n.children {
		pad(&b, 4)
		b.Write(c.bytes())
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint16(out[0:], uint16(len(out)))
	binary.LittleEndian.PutUint16(out[2:], valueLen)
	binary.LittleEndian.PutUint16(out[4:], typ)
	return out
}

func utf16z(s string) []byte {
	var b bytes.Buffer
	for _, u := range utf16.Encode([]rune(s)) {
		_ = binary.Write(&b, binary.LittleEndian, u)
	}
	b.Write([]byte{0, 0})
	return b.Bytes()
}

func pad(b *bytes.Buffer, n int) {
	if r := b.Len() % n; r != 0 {
		b.Write(make([]byte, n-r))
	}
}

func align(v, n uint32) uint32 { return (v + n - 1) / n * n }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
