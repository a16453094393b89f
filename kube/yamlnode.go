package kube

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// field is a key of a YAML mapping with its value; Line is the key's line.
type field struct {
	Key, Value *yaml.Node
}

// Line returns the 1-based line of the key, or 0 for a missing field.
func (f field) Line() int {
	if f.Key == nil {
		return 0
	}
	return f.Key.Line
}

// ok reports whether the field is present.
func (f field) ok() bool { return f.Value != nil }

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get looks a key up in a mapping; it returns a missing field for anything
// that is not a mapping.
func get(m *yaml.Node, key string) field {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return field{}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return field{Key: m.Content[i], Value: deref(m.Content[i+1])}
		}
	}
	return field{}
}

// path follows keys through nested mappings.
func path(m *yaml.Node, keys ...string) field {
	f := field{Value: m}
	for _, k := range keys {
		if f = get(f.Value, k); !f.ok() {
			return field{}
		}
	}
	return f
}

// str returns a scalar's value, or "".
func str(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// isTrue reports whether a scalar is the boolean true.
func isTrue(n *yaml.Node) bool {
	var b bool
	n = deref(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.Decode(&b) == nil && b
}

// items returns a sequence's elements, or nil.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = deref(c)
	}
	return out
}

// stringMap reads a mapping of scalars with each key's line.
func stringMap(n *yaml.Node) map[string]field {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string]field{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = field{Key: n.Content[i], Value: deref(n.Content[i+1])}
	}
	return out
}

// joinPath formats a field path, e.g. spec.template.spec.containers[0].
func joinPath(parts ...string) string {
	return strings.ReplaceAll(strings.Join(parts, "."), ".[", "[")
}
