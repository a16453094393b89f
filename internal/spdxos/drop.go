package spdxos

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// EmptySHA256 is the SHA-256 of no bytes: a file a scanner read empty.
const EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// DropFiles removes from statement's SPDX document the files for which
// drop (given the file name and its SHA-256, "" when it has none) is true,
// and the relationships that name them. Every other byte of the statement
// stays; the separators of the removed array elements go with them. It
// returns the names of the files removed.
func DropFiles(statement []byte, drop func(name, sha256 string) bool) ([]byte, []string, error) {
	if _, err := readDocument(statement); err != nil {
		return nil, nil, err
	}
	files, rels, err := locateElements(statement)
	if err != nil {
		return nil, nil, err
	}
	ids := map[string]bool{}
	var names []string
	keepFiles := make([]bool, len(files.elems))
	for k, e := range files.elems {
		var f struct {
			Name      string     `json:"fileName"`
			SPDXID    string     `json:"SPDXID"`
			Checksums []checksum `json:"checksums"`
		}
		if err := json.Unmarshal(statement[e.val:e.end], &f); err != nil {
			return nil, nil, err
		}
		sum := ""
		for _, c := range f.Checksums {
			if c.Algorithm == "SHA256" {
				sum = c.Value
			}
		}
		keepFiles[k] = !drop(f.Name, sum)
		if !keepFiles[k] {
			ids[f.SPDXID], names = true, append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return statement, nil, nil
	}
	keepRels := make([]bool, len(rels.elems))
	for k, e := range rels.elems {
		var r relationship
		if err := json.Unmarshal(statement[e.val:e.end], &r); err != nil {
			return nil, nil, err
		}
		keepRels[k] = !ids[r.Element] && !ids[r.Related]
	}
	out := rewriteArrays(statement, []filtered{{files, keepFiles}, {rels, keepRels}})
	return out, names, nil
}

// element is one array element: start is where the decoder stood before
// it (the first element's first byte; a later element's comma), val its
// first byte, end the byte after it.
type element struct{ start, val, end int }

// arraySpan is an array's elements and its closing bracket's offset.
type arraySpan struct {
	found bool
	elems []element
	close int
}

// filtered is an array with the elements to keep.
type filtered struct {
	a    arraySpan
	keep []bool
}

// rewriteArrays writes raw with each array's dropped elements removed.
func rewriteArrays(raw []byte, arrays []filtered) []byte {
	arrays = slices.DeleteFunc(arrays, func(f filtered) bool { return !f.a.found || len(f.a.elems) == 0 })
	slices.SortFunc(arrays, func(x, y filtered) int { return x.a.elems[0].start - y.a.elems[0].start })
	var out bytes.Buffer
	last := 0
	for _, f := range arrays {
		first := f.a.elems[0].start
		out.Write(raw[last:first])
		wrote := false
		for k, e := range f.a.elems {
			if !f.keep[k] {
				continue
			}
			sep := string(raw[e.start:e.val])
			switch {
			case !wrote:
				// What precedes the array's first element is written
				// already (raw[last:first]).
				sep = ""
			case !strings.Contains(sep, ","):
				sep = "," + sep
			}
			out.WriteString(sep)
			out.Write(raw[e.val:e.end])
			wrote = true
		}
		last = f.a.elems[len(f.a.elems)-1].end
	}
	out.Write(raw[last:])
	return out.Bytes()
}

// locateElements returns the elements of the predicate's files and
// relationships arrays.
func locateElements(statement []byte) (files, rels arraySpan, err error) {
	dec := json.NewDecoder(bytes.NewReader(statement))
	err = object(dec, func(key string) error {
		if key != "predicate" {
			return skip(dec)
		}
		return object(dec, func(key string) error {
			switch key {
			case "files":
				return elements(dec, statement, &files)
			case "relationships":
				return elements(dec, statement, &rels)
			}
			return skip(dec)
		})
	})
	return files, rels, err
}

// elements reads an array into a.
func elements(dec *json.Decoder, raw []byte, a *arraySpan) error {
	if err := delim(dec, '['); err != nil {
		return err
	}
	a.found = true
	for dec.More() {
		start := int(dec.InputOffset())
		if err := skip(dec); err != nil {
			return err
		}
		end := int(dec.InputOffset())
		val := start + len(raw[start:end]) - len(bytes.TrimLeft(raw[start:end], " \t\r\n,"))
		a.elems = append(a.elems, element{start, val, end})
	}
	if err := delim(dec, ']'); err != nil {
		return err
	}
	a.close = int(dec.InputOffset()) - 1
	return nil
}
