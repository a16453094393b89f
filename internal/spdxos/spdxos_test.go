package spdxos

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// syftStatement is laid out as buildkit-syft-scanner writes a statement
// (Syft's SPDX JSON, indented, inside an in-toto statement BuildKit gave a
// subject): a root package the document describes, a file, and a package
// the root contains.
const syftStatement = `{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://spdx.dev/Document","subject":[{"name":"pkg:docker/app@x?platform=windows%2Famd64","digest":{"sha256":"abc"}}],"predicate":{
 "spdxVersion": "SPDX-2.3",
 "dataLicense": "CC0-1.0",
 "SPDXID": "SPDXRef-DOCUMENT",
 "name": "sbom",
 "documentNamespace": "https://anchore.com/syft/dir/sbom-1",
 "creationInfo": {"creators": ["Organization: Anchore, Inc", "Tool: syft-v1.51.0", "Tool: buildkit-v0.34.2"], "created": "2026-12-04T18:00:00Z"},
 "packages": [
  {"name": "hello.exe", "SPDXID": "SPDXRef-Package-binary-hello.exe-1", "versionInfo": "1.0.0.0", "downloadLocation": "NOASSERTION", "primaryPackagePurpose": "APPLICATION"},
  {"name": "sbom", "SPDXID": "SPDXRef-DocumentRoot-Directory-sbom", "downloadLocation": "NOASSERTION", "primaryPackagePurpose": "FILE"}
 ],
 "files": [{"fileName": "/app/hello.exe", "SPDXID": "SPDXRef-File-app-hello.exe-1", "checksums": [{"algorithm": "SHA256", "checksumValue": "00"}], "copyrightText": ""}],
 "relationships": [
  {"spdxElementId": "SPDXRef-DocumentRoot-Directory-sbom", "relatedSpdxElement": "SPDXRef-Package-binary-hello.exe-1", "relationshipType": "CONTAINS"},
  {"spdxElementId": "SPDXRef-DOCUMENT", "relatedSpdxElement": "SPDXRef-DocumentRoot-Directory-sbom", "relationshipType": "DESCRIBES"}
 ]
}}
`

// bareStatement has neither packages nor relationships.
const bareStatement = `{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document","subject":[],"predicate":{"spdxVersion":"SPDX-2.3","dataLicense":"CC0-1.0","SPDXID":"SPDXRef-DOCUMENT","name":"sbom","documentNamespace":"https://imgctl.invalid/spdx/sbom","creationInfo":{"creators":["Tool: t"],"created":"1970-01-01T00:00:00Z"},"files":[{"fileName":"/License.txt","SPDXID":"SPDXRef-File-1","checksums":[{"algorithm":"SHA256","checksumValue":"00"}],"copyrightText":"NOASSERTION"}]}}`

var nano2022 = Windows{
	OSVersion: "10.0.20348.4297", Architecture: "amd64",
	Base:       "mcr.microsoft.com/windows/nanoserver:ltsc2022",
	BaseDigest: "sha256:" + strings.Repeat("ab", 32),
}

// parsed is a statement's predicate read with the SPDX project's own Go
// model.
func parsed(t *testing.T, st []byte) *spdx.Document {
	t.Helper()
	var s struct {
		Predicate spdx.Document `json:"predicate"`
	}
	if err := json.Unmarshal(st, &s); err != nil {
		t.Fatalf("%v\n%s", err, st)
	}
	return &s.Predicate
}

func pkgByID(doc *spdx.Document, id string) *spdx.Package {
	for _, p := range doc.Packages {
		if string(p.PackageSPDXIdentifier) == strings.TrimPrefix(id, "SPDXRef-") {
			return p
		}
	}
	return nil
}

func rels(doc *spdx.Document) []string {
	var out []string
	for _, r := range doc.Relationships {
		out = append(out, "SPDXRef-"+string(r.RefA.ElementRefID)+" "+r.Relationship+" SPDXRef-"+string(r.RefB.ElementRefID))
	}
	return out
}

// inserted is what AddWindows appends for w to a document whose roots
// are roots: the packages and the relationships.
func inserted(t *testing.T, w Windows, roots ...string) (string, string) {
	t.Helper()
	var rs []relationship
	for _, r := range roots {
		rs = append(rs, relationship{r, "CONTAINS", OSID}, relationship{r, "DESCENDANT_OF", BaseID})
	}
	rs = append(rs, relationship{BaseID, "CONTAINS", OSID})
	return string(must(encodeItems(must(packages(w))))), string(must(encodeItems(rs)))
}

func TestAddWindowsSyftDocument(t *testing.T) {
	out, err := AddWindows([]byte(syftStatement), nano2022)
	if err != nil {
		t.Fatal(err)
	}
	// Every byte of the statement stays: the new elements are spliced in
	// before each array's closing bracket.
	p, r := inserted(t, nano2022, "SPDXRef-DocumentRoot-Directory-sbom")
	want := strings.Replace(syftStatement, "}\n ],\n \"files\"", "}\n ,"+p+"],\n \"files\"", 1)
	want = strings.Replace(want, "}\n ]\n}}", "}\n ,"+r+"]\n}}", 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	doc := parsed(t, out)
	if len(doc.Packages) != 4 || len(doc.Files) != 1 {
		t.Fatalf("%d packages, %d files: want the scanner's 2 packages and file, and 2 more", len(doc.Packages), len(doc.Files))
	}
	os := pkgByID(doc, OSID)
	if os == nil || os.PackageName != "Nano Server" || os.PackageVersion != "10.0.20348.4297" || os.PrimaryPackagePurpose != "OPERATING-SYSTEM" {
		t.Fatalf("OS package %+v", os)
	}
	if len(os.PackageExternalReferences) != 1 || os.PackageExternalReferences[0].Locator != "cpe:2.3:o:microsoft:windows_server_2022:10.0.20348.4297:*:*:*:*:*:*:*" ||
		os.PackageExternalReferences[0].RefType != "cpe23Type" || os.PackageExternalReferences[0].Category != "SECURITY" {
		t.Errorf("OS references %+v", os.PackageExternalReferences)
	}
	base := pkgByID(doc, BaseID)
	wantPURL := "pkg:oci/nanoserver@sha256:" + strings.Repeat("ab", 32) + "?arch=amd64&repository_url=mcr.microsoft.com%2Fwindows%2Fnanoserver&tag=ltsc2022"
	if base == nil || base.PackageName != "mcr.microsoft.com/windows/nanoserver" || base.PackageVersion != nano2022.BaseDigest || base.PrimaryPackagePurpose != "CONTAINER" ||
		len(base.PackageChecksums) != 1 || base.PackageChecksums[0].Value != strings.Repeat("ab", 32) ||
		len(base.PackageExternalReferences) != 1 || base.PackageExternalReferences[0].Locator != wantPURL {
		t.Fatalf("base package %+v %+v, want purl %s", base, base.PackageExternalReferences, wantPURL)
	}
	wantRels := []string{
		"SPDXRef-DocumentRoot-Directory-sbom CONTAINS SPDXRef-Package-binary-hello.exe-1",
		"SPDXRef-DOCUMENT DESCRIBES SPDXRef-DocumentRoot-Directory-sbom",
		"SPDXRef-DocumentRoot-Directory-sbom CONTAINS " + OSID,
		"SPDXRef-DocumentRoot-Directory-sbom DESCENDANT_OF " + BaseID,
		BaseID + " CONTAINS " + OSID,
	}
	if got := rels(doc); !slices.Equal(got, wantRels) {
		t.Errorf("relationships\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRels, "\n"))
	}
	if !strings.Contains(string(out), "&tag=ltsc2022") {
		t.Errorf("the package URL's & was escaped")
	}
}

func TestAddWindowsBareDocument(t *testing.T) {
	w := nano2022
	w.Base, w.OSVersion = "127.0.0.1:5000/windows/servercore:ltsc2025", "10.0.26100.32230"
	out, err := AddWindows([]byte(bareStatement), w)
	if err != nil {
		t.Fatal(err)
	}
	doc := parsed(t, out)
	os := pkgByID(doc, OSID)
	if os == nil || os.PackageName != "Windows Server Core" || os.PackageExternalReferences[0].Locator != "cpe:2.3:o:microsoft:windows_server_2025:10.0.26100.32230:*:*:*:*:*:*:*" {
		t.Fatalf("OS package %+v", os)
	}
	want := []string{"SPDXRef-DOCUMENT CONTAINS " + OSID, "SPDXRef-DOCUMENT DESCENDANT_OF " + BaseID, BaseID + " CONTAINS " + OSID}
	if got := rels(doc); !slices.Equal(got, want) {
		t.Errorf("relationships %v, want %v", got, want)
	}
	// The arrays are made at the predicate's end.
	p, r := inserted(t, w, "SPDXRef-DOCUMENT")
	if want := strings.TrimSuffix(bareStatement, "}}") + `,"packages":[` + p + `],"relationships":[` + r + `]}}`; string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestAddWindowsRefuses(t *testing.T) {
	once := must(AddWindows([]byte(bareStatement), nano2022))
	for name, tc := range map[string]struct {
		st []byte
		w  Windows
	}{
		"provenance":      {[]byte(`{"predicateType":"https://slsa.dev/provenance/v1","predicate":{"spdxVersion":"SPDX-2.3"}}`), nano2022},
		"SPDX 3":          {[]byte(`{"predicateType":"https://spdx.dev/Document","predicate":{"spdxVersion":"SPDX-3.0"}}`), nano2022},
		"not JSON":        {[]byte(`{"predicateType"`), nano2022},
		"twice":           {once, nano2022},
		"no os.version":   {[]byte(bareStatement), Windows{Base: nano2022.Base, BaseDigest: nano2022.BaseDigest}},
		"bad base digest": {[]byte(bareStatement), Windows{OSVersion: "10.0.20348.1", Base: nano2022.Base, BaseDigest: "abc"}},
		"packages null":   {[]byte(strings.Replace(bareStatement, `"files"`, `"packages":null,"files"`, 1)), nano2022},
	} {
		if out, err := AddWindows(tc.st, tc.w); err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
	if _, err := AddWindows([]byte(`{"predicateType":"x","predicate":{}}`), nano2022); !errors.Is(err, ErrNotSPDX) {
		t.Errorf("another predicate: %v, want ErrNotSPDX", err)
	}
}

func TestProductAndCPE(t *testing.T) {
	for base, want := range map[string]string{
		"mcr.microsoft.com/windows/nanoserver:ltsc2022":         "Nano Server",
		"mcr.microsoft.com/windows/servercore@sha256:" + "00":   "Windows Server Core",
		"mcr.microsoft.com/windows/server:ltsc2025":             "Windows Server",
		"mcr.microsoft.com/windows:ltsc2019":                    "Windows",
		"127.0.0.1:5000/mirror/windows/NanoServer:10.0.26100.1": "Nano Server",
		"registry.example.com/team/app-base:1":                  "Windows Server",
	} {
		if got := Product(base); got != want {
			t.Errorf("Product(%s) = %q, want %q", base, got, want)
		}
	}
	for v, want := range map[string]string{
		"10.0.17763.8027":  "cpe:2.3:o:microsoft:windows_server_2019:10.0.17763.8027:*:*:*:*:*:*:*",
		"10.0.20348.4297":  "cpe:2.3:o:microsoft:windows_server_2022:10.0.20348.4297:*:*:*:*:*:*:*",
		"10.0.26100.32230": "cpe:2.3:o:microsoft:windows_server_2025:10.0.26100.32230:*:*:*:*:*:*:*",
		"10.0.25398.1965":  "cpe:2.3:o:microsoft:windows_server_23h2:10.0.25398.1965:*:*:*:*:*:*:*",
		"10.0.26200.1":     "",
		"10.0.20348":       "",
		"garbage":          "",
	} {
		got, ok := CPE(v)
		if got != want || ok != (want != "") {
			t.Errorf("CPE(%s) = %q, %v, want %q", v, got, ok, want)
		}
	}
}

// TestDropFiles: the files drop names go, with the relationships naming
// them, wherever they stand in their arrays; the rest keeps its bytes.
func TestDropFiles(t *testing.T) {
	st := `{"predicateType":"https://spdx.dev/Document","predicate":{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT",
 "files": [
  {"fileName": "/License.txt", "SPDXID": "SPDXRef-F1", "checksums": [{"algorithm": "SHA256", "checksumValue": "` + EmptySHA256 + `"}]},
  {"fileName": "/app/app.exe", "SPDXID": "SPDXRef-F2", "checksums": [{"algorithm": "SHA256", "checksumValue": "00"}]},
  {"fileName": "/Windows/System32/cmd.exe", "SPDXID": "SPDXRef-F3", "checksums": [{"algorithm": "SHA256", "checksumValue": "` + EmptySHA256 + `"}]}
 ],
 "relationships": [
  {"spdxElementId": "SPDXRef-P", "relatedSpdxElement": "SPDXRef-F1", "relationshipType": "CONTAINS"},
  {"spdxElementId": "SPDXRef-P", "relatedSpdxElement": "SPDXRef-F2", "relationshipType": "CONTAINS"},
  {"spdxElementId": "SPDXRef-F3", "relatedSpdxElement": "SPDXRef-P", "relationshipType": "OTHER"}
 ]}}`
	out, names, err := DropFiles([]byte(st), func(name, sum string) bool { return sum == EmptySHA256 })
	if err != nil {
		t.Fatal(err)
	}
	want := `{"predicateType":"https://spdx.dev/Document","predicate":{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT",
 "files": [
  {"fileName": "/app/app.exe", "SPDXID": "SPDXRef-F2", "checksums": [{"algorithm": "SHA256", "checksumValue": "00"}]}
 ],
 "relationships": [
  {"spdxElementId": "SPDXRef-P", "relatedSpdxElement": "SPDXRef-F2", "relationshipType": "CONTAINS"}
 ]}}`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if !slices.Equal(names, []string{"/License.txt", "/Windows/System32/cmd.exe"}) {
		t.Errorf("dropped %v", names)
	}
	same, none, err := DropFiles([]byte(st), func(string, string) bool { return false })
	if err != nil || string(same) != st || len(none) != 0 {
		t.Errorf("nothing to drop changed the statement (%v, %v)", none, err)
	}
	all, _, err := DropFiles([]byte(st), func(string, string) bool { return true })
	if err != nil || !json.Valid(all) || strings.Contains(string(all), "SPDXRef-F") {
		t.Errorf("dropping all: %v\n%s", err, all)
	}
}
