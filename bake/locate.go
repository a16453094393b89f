package bake

import (
	"fmt"
	"strings"

	bx "github.com/docker/buildx/bake"
	"github.com/hashicorp/hcl/v2"
	"go.yaml.in/yaml/v3"
)

// locator finds where a target, group or attribute is written, so that an
// error names the file and line: HCL and JSON files through HCL's own
// ranges (bx.ParseHCLFile, the parser buildx uses), compose files through
// the YAML nodes' lines.
type locator struct {
	names []string // every file, in order
	hcl   []*hcl.File
	yaml  []yamlFile
	// matrix maps a target a matrix made to the label of its block (buildx
	// adds a group named after the block, listing what it made).
	matrix map[string]string
	// inherits are each target's inherits, as written.
	inherits map[string][]string
}

type yamlFile struct {
	name string
	root *yaml.Node
}

var blockSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "target", LabelNames: []string{"name"}},
	{Type: "group", LabelNames: []string{"name"}},
}}

func newLocator(files []bx.File, cfg *bx.Config) *locator {
	l := &locator{matrix: map[string]string{}, inherits: map[string][]string{}}
	for _, t := range cfg.Targets {
		l.inherits[t.Name] = t.Inherits
	}
	for _, f := range files {
		l.names = append(l.names, f.Name)
		if n := strings.ToLower(f.Name); !strings.HasSuffix(n, ".yml") && !strings.HasSuffix(n, ".yaml") {
			if hf, ok, err := bx.ParseHCLFile(f.Data, f.Name); ok && err == nil {
				l.hcl = append(l.hcl, hf)
				continue
			}
		}
		var doc yaml.Node
		if yaml.Unmarshal(f.Data, &doc) == nil && len(doc.Content) == 1 {
			l.yaml = append(l.yaml, yamlFile{name: f.Name, root: doc.Content[0]})
		}
	}
	for _, g := range cfg.Groups {
		if _, ok := l.block("target", g.Name); !ok {
			continue
		}
		for _, t := range g.Targets {
			if t != g.Name {
				l.matrix[t] = g.Name
			}
		}
	}
	return l
}

// block finds the HCL or JSON block of typ ("target", "group") labelled
// name; the first file that has one wins.
func (l *locator) block(typ, name string) (*hcl.Block, bool) {
	for _, f := range l.hcl {
		content, _, _ := f.Body.PartialContent(blockSchema)
		if content == nil {
			continue
		}
		for _, b := range content.Blocks {
			if b.Type == typ && len(b.Labels) == 1 && b.Labels[0] == name {
				return b, true
			}
		}
	}
	return nil, false
}

// target is where target name is defined: FILE:LINE of its block (the
// matrix block that made it), or of its compose service, else the files.
func (l *locator) target(name string) string { return l.attr(name, "") }

// group is where group name is defined.
func (l *locator) group(name string) string {
	if b, ok := l.block("group", name); ok {
		return rangeString(b.DefRange)
	}
	return strings.Join(l.names, ", ")
}

// attr is where attribute key of target name is written (an HCL name:
// tags, platforms, cache-from...): its line in the target's block, or in
// the block of a target it inherits the attribute from, or, in a compose
// file, under the service's build (cache_from); else where the target is
// defined. An empty key asks for the target itself.
func (l *locator) attr(name, key string) string {
	if key != "" {
		if at, ok := l.written(name, key, map[string]bool{}); ok {
			return at
		}
	}
	label := name
	if m, ok := l.matrix[name]; ok {
		label = m
	}
	if b, ok := l.block("target", label); ok {
		return rangeString(b.DefRange)
	}
	for _, f := range l.yaml {
		if svc := l.service(f, name); svc != nil {
			return fmt.Sprintf("%s:%d", f.name, svc.key.Line)
		}
	}
	return strings.Join(l.names, ", ")
}

// written finds key in target name's own block or compose service, else
// in the targets it inherits from, nearest first.
func (l *locator) written(name, key string, seen map[string]bool) (string, bool) {
	if seen[name] {
		return "", false
	}
	seen[name] = true
	label := name
	if m, ok := l.matrix[name]; ok {
		label = m
	}
	if b, ok := l.block("target", label); ok {
		content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: key}}})
		if content != nil {
			if a, ok := content.Attributes[key]; ok {
				return rangeString(a.NameRange), true
			}
		}
	}
	for _, f := range l.yaml {
		if svc := l.service(f, name); svc != nil {
			if k, _ := entry(mappingValue(svc.value, "build"), strings.ReplaceAll(key, "-", "_")); k != nil {
				return fmt.Sprintf("%s:%d", f.name, k.Line), true
			}
		}
	}
	for i := len(l.inherits[name]) - 1; i >= 0; i-- { // the last one inherited wins
		if at, ok := l.written(l.inherits[name][i], key, seen); ok {
			return at, true
		}
	}
	return "", false
}

// composeService is a service's key and value nodes.
type composeService struct{ key, value *yaml.Node }

// service finds the compose service whose target is name (buildx names
// the target after the service, dots replaced by underscores).
func (l *locator) service(f yamlFile, name string) *composeService {
	services := mappingValue(f.root, "services")
	if services == nil || services.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(services.Content); i += 2 {
		if k := services.Content[i]; strings.ReplaceAll(k.Value, ".", "_") == name {
			return &composeService{key: k, value: services.Content[i+1]}
		}
	}
	return nil
}

// composeServices are the services with a build section, by target name,
// in every compose file.
func (l *locator) composeServices() map[string][]composeFileService {
	out := map[string][]composeFileService{}
	for _, f := range l.yaml {
		services := mappingValue(f.root, "services")
		if services == nil || services.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(services.Content); i += 2 {
			name := strings.ReplaceAll(services.Content[i].Value, ".", "_")
			if b := mappingValue(services.Content[i+1], "build"); b != nil {
				out[name] = append(out[name], composeFileService{file: f.name, build: b})
			}
		}
	}
	return out
}

// composeFileService is one service's build section in one file.
type composeFileService struct {
	file  string
	build *yaml.Node
}

// entry is the key and value nodes of key in mapping m; nils when m is
// no mapping or lacks it.
func entry(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// mappingValue is the value node of key in mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	_, v := entry(m, key)
	return v
}

func rangeString(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }
