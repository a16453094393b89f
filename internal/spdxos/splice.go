package spdxos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// array is where an array member of the predicate ends.
type array struct {
	found bool
	close int  // offset of its ']'
	empty bool // it has no element
}

// location is where AddWindows splices into a statement.
type location struct {
	packages, relationships array
	end                     int // offset of the predicate's closing '}'
}

// insertion puts data at offset at.
type insertion struct {
	at   int
	data []byte
}

// insert is the insertion of items into a, or of the member key with
// items before end when a is absent.
func (a array) insert(key string, items []byte, end int) insertion {
	switch {
	case !a.found:
		k, _ := json.Marshal(key)
		return insertion{end, slices.Concat([]byte(","), k, []byte(":["), items, []byte("]"))}
	case a.empty:
		return insertion{a.close, items}
	}
	return insertion{a.close, slices.Concat([]byte(","), items)}
}

// splice applies ins to raw, each at its offset in raw.
func splice(raw []byte, ins []insertion) []byte {
	slices.SortStableFunc(ins, func(a, b insertion) int { return a.at - b.at })
	var out bytes.Buffer
	last := 0
	for _, in := range ins {
		out.Write(raw[last:in.at])
		out.Write(in.data)
		last = in.at
	}
	out.Write(raw[last:])
	return out.Bytes()
}

// locate walks statement with a JSON tokenizer and returns the offsets of
// the predicate's packages and relationships arrays and of its end.
func locate(statement []byte) (location, error) {
	var loc location
	dec := json.NewDecoder(bytes.NewReader(statement))
	err := object(dec, func(key string) error {
		if key != "predicate" {
			return skip(dec)
		}
		err := object(dec, func(key string) error {
			switch key {
			case "packages":
				return arrayEnd(dec, &loc.packages)
			case "relationships":
				return arrayEnd(dec, &loc.relationships)
			}
			return skip(dec)
		})
		loc.end = int(dec.InputOffset()) - 1
		return err
	})
	if err == nil && loc.end <= 0 {
		err = fmt.Errorf("%w: no predicate object", ErrNotSPDX)
	}
	return loc, err
}

// object reads a JSON object, calling member for each key with the
// decoder before the key's value.
func object(dec *json.Decoder, member func(key string) error) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, ok := t.(string)
		if !ok {
			return fmt.Errorf("%w: object key %v", ErrNotSPDX, t)
		}
		if err := member(k); err != nil {
			return err
		}
	}
	return delim(dec, '}')
}

// arrayEnd reads an array into a.
func arrayEnd(dec *json.Decoder, a *array) error {
	if err := delim(dec, '['); err != nil {
		return err
	}
	a.found, a.empty = true, !dec.More()
	for dec.More() {
		if err := skip(dec); err != nil {
			return err
		}
	}
	if err := delim(dec, ']'); err != nil {
		return err
	}
	a.close = int(dec.InputOffset()) - 1
	return nil
}

func delim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("%w: want %v, found %v", ErrNotSPDX, want, t)
	}
	return nil
}

func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}
