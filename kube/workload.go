package kube

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/snapshot"
)

// Taint is a node taint that Windows pods must tolerate.
type Taint struct {
	Key, Value, Effect string
}

// DefaultWindowsTaint is the conventional taint of Windows nodes,
// os=windows:NoSchedule.
var DefaultWindowsTaint = Taint{Key: "os", Value: "windows", Effect: "NoSchedule"}

// ParseTaint reads a taint as kubectl taint writes it: key=value:Effect or
// key:Effect.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(strings.TrimSpace(s), ":")
	key, value, _ := strings.Cut(kv, "=")
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		ok = false
	}
	if !ok || key == "" {
		return Taint{}, fmt.Errorf("%w %q: want key=value:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute", ErrInvalidTaint, s)
	}
	return Taint{Key: key, Value: value, Effect: effect}, nil
}

// String formats the taint as ParseTaint reads it.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// WorkloadOptions select what CheckWorkloads checks.
type WorkloadOptions struct {
	// Image is the index the workloads run (from --image-index). When nil,
	// the rules that need the image judge by the manifests alone.
	Image *snapshot.Snapshot
	// WindowsTaint is the taint Windows nodes carry; the zero Taint skips
	// the toleration rule. The CLI defaults to DefaultWindowsTaint.
	WindowsTaint Taint
}

// WorkloadReport is the result of CheckWorkloads. Its findings set File
// (as ReadManifests was given it), Line, Object (Kind/name) and Container
// (the container's name, "" for a pod-level finding).
type WorkloadReport struct {
	Passed   bool               `json:"passed"`
	Findings []findings.Finding `json:"findings"`
}

// Errors counts the findings of error severity.
func (r *WorkloadReport) Errors() int {
	return findings.Count(r.Findings, findings.Error)
}

// workloadFinding is a finding as check-workload -o json prints it: file,
// line, object and container always, container "" for a pod-level
// finding; no digest, platform or stage.
type workloadFinding struct {
	Rule      string            `json:"rule"`
	Severity  findings.Severity `json:"severity"`
	File      string            `json:"file"`
	Line      int               `json:"line"`
	Object    string            `json:"object"`
	Container string            `json:"container"`
	Message   string            `json:"message"`
}

// MarshalJSON encodes the report as check-workload's JSON contract, which
// keeps "container": "" where findings.Finding's encoding leaves it out.
func (r WorkloadReport) MarshalJSON() ([]byte, error) {
	var fs []workloadFinding
	if r.Findings != nil {
		fs = make([]workloadFinding, len(r.Findings))
	}
	for i, f := range r.Findings {
		fs[i] = workloadFinding{Rule: f.Rule, Severity: f.Severity, File: f.File, Line: f.Line,
			Object: f.Object, Container: f.Container, Message: f.Message}
	}
	return json.Marshal(struct {
		Passed   bool              `json:"passed"`
		Findings []workloadFinding `json:"findings"`
	}{r.Passed, fs})
}

// CheckWorkloads checks every pod template that lands on Windows nodes (by
// spec.os.name, a nodeSelector or node affinity on kubernetes.io/os, or a
// RuntimeClass among objs that selects Windows nodes) and every
// RuntimeClass. RuntimeClasses apply across all objs, whatever file they
// came from. It does no I/O.
func CheckWorkloads(objs []Object, o WorkloadOptions) *WorkloadReport {
	c := &wchecker{o: o, classes: map[string]runtimeClass{}, r: &WorkloadReport{Findings: []findings.Finding{}}}
	for _, obj := range objs {
		if rc, ok := obj.runtimeClass(); ok {
			c.classes[obj.Name] = rc
			c.runtimeClassVariant(rc)
		}
	}
	for _, obj := range objs {
		c.pod(obj)
	}
	c.sort(objs)
	c.r.Passed = c.r.Errors() == 0
	return c.r
}

// sort orders findings by file (in input order), then line.
func (c *wchecker) sort(objs []Object) {
	order := map[string]int{}
	for _, o := range objs {
		if _, ok := order[o.File]; !ok {
			order[o.File] = len(order)
		}
	}
	slices.SortStableFunc(c.r.Findings, func(a, b findings.Finding) int {
		return cmp.Or(cmp.Compare(order[a.File], order[b.File]), cmp.Compare(a.Line, b.Line))
	})
}

type wchecker struct {
	o       WorkloadOptions
	classes map[string]runtimeClass
	r       *WorkloadReport
}

func (c *wchecker) add(rule string, sev findings.Severity, obj Object, container string, line int, format string, args ...any) {
	if line == 0 {
		line = obj.Line
	}
	c.r.Findings = append(c.r.Findings, findings.Finding{
		Rule: rule, Severity: sev, File: obj.File, Line: line, Object: obj.ID(),
		Container: container, Message: fmt.Sprintf(format, args...),
	})
}
