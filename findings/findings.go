// Package findings is the one shape of what imgctl's checks report: lint
// (a Dockerfile), verify and policy (an index), sign (signatures) and kube
// (nodes and workloads) all return Findings, and the CLI prints them as
// text, JSON, SARIF, GitHub annotations and step-summary rows through one
// adapter. Like platform and snapshot it is a value package: it imports
// nothing of imgctl.
package findings

// Severity of a finding.
type Severity string

// Severities. Only errors fail a check.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one problem a check found. Rule, Severity and Message are
// always set; the other fields say where the problem is, and each check
// sets those it knows: verify, policy and sign the Digest and Platform of
// an index entry; lint the File, Line, Platform and Stage of a Dockerfile
// instruction; kube's workload check the File, Line, Object and Container
// of a manifest.
//
// The JSON names and omitempty are the -o json contract of lint and
// verify, which leave out what they never set: verify has no file and
// line, lint no digest (and every lint finding has a file and a line).
// check-workload prints file, line, object and container always, through
// its own report's encoding (kube.WorkloadReport).
type Finding struct {
	// Rule names the check, stable for scripts and policies.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Digest is the manifest or index the finding is about.
	Digest string `json:"digest,omitempty"`
	// File is the file as the caller named it ("-" for stdin).
	File string `json:"file,omitempty"`
	// Line is the 1-based line in File of what the finding is about.
	Line int `json:"line,omitempty"`
	// Platform is the platform the finding holds for: an index entry's, a
	// node's, or the target platform of a Dockerfile instruction ("" when
	// it holds for every platform).
	Platform string `json:"platform,omitempty"`
	// Stage is a Dockerfile stage, as BuildKit names it.
	Stage string `json:"stage,omitempty"`
	// Object is a Kubernetes object, Kind/name.
	Object string `json:"object,omitempty"`
	// Container is a container of Object; "" for a pod-level finding.
	Container string `json:"container,omitempty"`
	// Message says what is wrong and how to fix it.
	Message string `json:"message"`
}

// Errors returns the findings of error severity, in order; nil when there
// are none.
func Errors(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == Error {
			out = append(out, f)
		}
	}
	return out
}

// Count counts the findings of severity s.
func Count(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Passed reports whether fs has no finding of error severity.
func Passed(fs []Finding) bool {
	return Count(fs, Error) == 0
}
