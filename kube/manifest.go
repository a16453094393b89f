package kube

import (
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Object is one Kubernetes object read from a YAML stream.
type Object struct {
	// File is the name the stream was read under ("-" for stdin).
	File string
	// Line is the line of the object's kind.
	Line int
	// Kind and Name are kind and metadata.name.
	Kind, Name string
	root       *yaml.Node
}

// ID names the object as Kind/name, as kubectl does.
func (o Object) ID() string { return o.Kind + "/" + o.Name }

// ReadManifests reads every object of a multi-document YAML stream. The
// items of a v1 List are read as objects. Empty documents are skipped; a
// document that is not a mapping with a kind is an error.
func ReadManifests(file string, r io.Reader) ([]Object, error) {
	dec := yaml.NewDecoder(r)
	var out []Object
	for doc := 1; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: document %d: %w", ErrInvalidManifest, file, doc, err)
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue
		}
		objs, err := objects(file, n.Content[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: document %d: %w", ErrInvalidManifest, file, doc, err)
		}
		out = append(out, objs...)
	}
}

func objects(file string, m *yaml.Node) ([]Object, error) {
	m = deref(m)
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a Kubernetes object (a mapping with apiVersion and kind)", m.Line)
	}
	kind := get(m, "kind")
	if str(kind.Value) == "" {
		return nil, fmt.Errorf("line %d: the object has no kind", m.Line)
	}
	if str(kind.Value) == "List" {
		var out []Object
		for _, it := range items(get(m, "items").Value) {
			objs, err := objects(file, it)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	return []Object{{File: file, Line: kind.Line(), Kind: str(kind.Value), Name: str(path(m, "metadata", "name").Value), root: m}}, nil
}

// podSpecPaths says where each workload kind keeps its pod spec.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"PodTemplate":           {"template", "spec"},
	"Deployment":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
}

// podSpec returns the object's pod spec and its path, if it has one.
func (o Object) podSpec() (field, []string) {
	p, ok := podSpecPaths[o.Kind]
	if !ok {
		return field{}, nil
	}
	f := path(o.root, p...)
	if !f.ok() {
		return field{}, nil
	}
	return f, p
}

// runtimeClass is what scheduling a RuntimeClass brings to its pods.
type runtimeClass struct {
	obj          Object
	nodeSelector map[string]field
	tolerations  []*yaml.Node
}

func (o Object) runtimeClass() (runtimeClass, bool) {
	if o.Kind != "RuntimeClass" {
		return runtimeClass{}, false
	}
	sched := get(o.root, "scheduling").Value
	return runtimeClass{
		obj:          o,
		nodeSelector: stringMap(get(sched, "nodeSelector").Value),
		tolerations:  items(get(sched, "tolerations").Value),
	}, true
}

// windowsBuild returns the node.kubernetes.io/windows-build the class
// selects, if any.
func (rc runtimeClass) windowsBuild() field {
	return rc.nodeSelector[LabelWindowsBuild]
}

// windows reports whether the class schedules onto Windows nodes.
func (rc runtimeClass) windows() bool {
	return str(rc.nodeSelector[LabelOS].Value) == "windows" || rc.windowsBuild().ok()
}
