package rebase

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The rebased manifest and config are edited as JSON, not re-serialised
// from go-containerregistry's structs: only the fields rebase changes are
// rewritten, and every other field, known to those structs or not (such as
// BuildKit's moby.buildkit.buildinfo.v1 in a config, or a layer
// descriptor's annotations), keeps its bytes and its position.

// encode marshals v without HTML escaping ("&&" in a history entry stays
// as it is) and without the encoder's trailing newline.
func encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// field returns the raw value of key in the JSON object raw, nil if absent.
func field(raw []byte, key string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m[key], nil
}

// replaceKeys rewrites the JSON object raw: keys in repl get their new
// value in place (a nil value deletes the key), keys not in raw are
// appended in the order given by order, and every other key keeps its raw
// value and position.
func replaceKeys(raw []byte, repl map[string]json.RawMessage, order ...string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	done := map[string]bool{}
	write := func(k string, v json.RawMessage) error {
		kb, err := encode(k)
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
