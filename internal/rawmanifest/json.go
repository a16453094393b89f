package rawmanifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Encode marshals v without HTML escaping ("&&" in a history entry stays
// as it is) and without the encoder's trailing newline.
func Encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Field returns the raw value of key in the JSON object raw, nil if absent.
func Field(raw []byte, key string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m[key], nil
}

// ReplaceKeys rewrites the JSON object raw: keys in repl get their new
// value in place (a nil value deletes the key), keys not in raw are
// appended in the order given by order, and every other key keeps its raw
// value and position.
func ReplaceKeys(raw []byte, repl map[string]json.RawMessage, order ...string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	done := map[string]bool{}
	write := func(k string, v json.RawMessage) error {
		kb, err := Encode(k)
		if err != nil {
			return err
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(kb)
		out.WriteByte(':')
		return json.Compact(&out, v)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if nv, ok := repl[k]; ok {
			done[k], v = true, nv
		}
		if v == nil {
			continue
		}
		if err := write(k, v); err != nil {
			return nil, err
		}
	}
	for _, k := range order {
		if v, ok := repl[k]; ok && !done[k] && v != nil {
			if err := write(k, v); err != nil {
				return nil, err
			}
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Set is ReplaceKeys with values to encode: each key of values gets its
// encoded value in place, keys not in raw are appended in the order given
// by order.
func Set(raw []byte, values map[string]any, order ...string) ([]byte, error) {
	repl := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		b, err := Encode(v)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", k, err)
		}
		repl[k] = b
	}
	return ReplaceKeys(raw, repl, order...)
}

// WithDiffIDs is config raw with rootfs.diff_ids replaced by diffIDs in
// place, every other field of the config and of rootfs kept as it is. A
// config without rootfs gets {"type":"layers","diff_ids":...} appended.
func WithDiffIDs(raw []byte, diffIDs []v1.Hash) ([]byte, error) {
	rootfs, err := Field(raw, "rootfs")
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	if rootfs == nil {
		rootfs = json.RawMessage(`{"type":"layers"}`)
	}
	if rootfs, err = Set(rootfs, map[string]any{"diff_ids": diffIDs}, "diff_ids"); err != nil {
		return nil, fmt.Errorf("reading config's rootfs: %w", err)
	}
	return ReplaceKeys(raw, map[string]json.RawMessage{"rootfs": rootfs}, "rootfs")
}
