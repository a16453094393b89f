// Package kube reads what a Kubernetes cluster tells about itself and about
// the workloads it runs, and checks a multi-platform index against it: the
// node inventory (`kubectl get nodes -o json`) becomes verify targets with
// each node's own engine, and Windows workload manifests are checked for the
// fields and habits that fail on Windows nodes. It reads, it never talks to
// a cluster.
package kube

import "errors"

// Sentinel errors.
var (
	// ErrInvalidNodes is returned for a node inventory that is not a v1
	// List (or NodeList) of Node objects as kubectl prints it.
	ErrInvalidNodes = errors.New("invalid node inventory")
	// ErrNoNodes is returned for a node inventory without nodes.
	ErrNoNodes = errors.New("the node inventory has no nodes")
	// ErrInvalidManifest is returned for YAML that cannot be read as
	// Kubernetes objects.
	ErrInvalidManifest = errors.New("invalid manifest")
	// ErrInvalidTaint is returned by ParseTaint.
	ErrInvalidTaint = errors.New("invalid taint")
)

// Rules about the node inventory, reported in a verify.Report.
const (
	// RuleNodeNoVariant (error): the node's engine runs no variant of the
	// index, or picks one that does not start on the node.
	RuleNodeNoVariant = "node-no-variant"
	// RuleNodeEngineQuirk (warning): the node's engine picks a different
	// variant than containerd 2.x would.
	RuleNodeEngineQuirk = "node-engine-quirk"
	// RuleNodeUnknownRuntime (warning): the container runtime is not one
	// imgctl has a profile for; the node is checked with every profile.
	RuleNodeUnknownRuntime = "node-unknown-runtime"
	// RuleNodeUnknownPlatform (warning): the node's OS, architecture or
	// Windows build cannot be read; the node is skipped.
	RuleNodeUnknownPlatform = "node-unknown-platform"
)

// Rules about workload manifests.
const (
	// RuleWindowsForbiddenField (error): a field the API server rejects in
	// a pod with spec.os.name: windows.
	RuleWindowsForbiddenField = "windows-forbidden-field"
	// RuleRunAsNonRootAdministrator (error): runAsNonRoot with the user
	// ContainerAdministrator, which kubelet refuses to start.
	RuleRunAsNonRootAdministrator = "run-as-non-root-administrator"
	// RuleRuntimeClassNoVariant (error): the Windows build a RuntimeClass
	// selects has no variant in the image index.
	RuleRuntimeClassNoVariant = "runtimeclass-no-variant"
	// RuleMissingWindowsToleration (warning): a Windows pod that does not
	// tolerate the Windows node taint.
	RuleMissingWindowsToleration = "missing-windows-toleration"
	// RuleNoMemoryLimit (warning): a container on Windows without a memory
	// limit.
	RuleNoMemoryLimit = "no-memory-limit"
	// RuleExecProbeDefaultTimeout (warning): an exec probe on Windows with
	// the default one-second timeout.
	RuleExecProbeDefaultTimeout = "exec-probe-default-timeout"
	// RulePreStopNeedsShell (error, warning for PowerShell): a preStop exec
	// hook that runs a shell Windows images do not have.
	RulePreStopNeedsShell = "prestop-needs-shell"
)

// NodeRules and WorkloadRules list every rule name this package reports.
var (
	NodeRules     = []string{RuleNodeNoVariant, RuleNodeEngineQuirk, RuleNodeUnknownRuntime, RuleNodeUnknownPlatform}
	WorkloadRules = []string{
		RuleWindowsForbiddenField, RuleRunAsNonRootAdministrator, RuleRuntimeClassNoVariant,
		RuleMissingWindowsToleration, RuleNoMemoryLimit, RuleExecProbeDefaultTimeout, RulePreStopNeedsShell,
	}
)

// Well-known labels.
const (
	LabelOS           = "kubernetes.io/os"
	LabelArch         = "kubernetes.io/arch"
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
)
