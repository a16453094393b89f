package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/kube"
	"github.com/imgctl/imgctl/snapshot"
)

type checkWorkloadOptions struct {
	imageIndex   string
	windowsTaint string
	concurrency  int
}

func newCheckWorkloadCmd(ro *rootOptions) *cobra.Command {
	o := &checkWorkloadOptions{}
	cmd := &cobra.Command{
		Use:   "check-workload FILE...",
		Short: "Check Kubernetes manifests of Windows workloads for what fails on Windows nodes",
		Long: `check-workload reads Kubernetes YAML (multi-document; - for stdin): Deployments,
StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, Pods and RuntimeClasses.
Every pod template that lands on Windows nodes (spec.os.name: windows, a
nodeSelector or required node affinity on kubernetes.io/os=windows, or a
RuntimeClass that selects Windows nodes) is checked for forbidden
securityContext fields, runAsNonRoot with ContainerAdministrator, the Windows
taint toleration, memory limits, exec probe timeouts and preStop hooks that
need a shell. With --image-index, RuntimeClasses that select a
node.kubernetes.io/windows-build are checked against the index's variants,
and the image's user is read from its Windows configs. The index applies to
every container. It exits 0 when there are no errors (warnings allowed), 1
on errors, and 2 on usage, parse, network or registry errors. -o sarif
prints a SARIF 2.1.0 log for code scanning.`,
		Example: `  imgctl check-workload deploy/windows.yaml --image-index registry.example.com/app:1.0
  helm template app ./chart | imgctl check-workload - -o json`,
		Args:        cobra.MinimumNArgs(1),
		Annotations: map[string]string{sarifCapable: "true"},
		RunE:        func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.imageIndex, "image-index", "", "the image index the workloads run: check RuntimeClass builds against its variants and read the user of its Windows configs")
	fl.StringVar(&o.windowsTaint, "windows-taint", kube.DefaultWindowsTaint.String(), `the taint of the Windows nodes that pods must tolerate, key=value:Effect ("" skips the check)`)
	addJobsFlag(fl, &o.concurrency, jobsReads)
	renamedFlag(fl, "concurrency", "jobs")
	return cmd
}

// run checks the manifests of files.
func (o *checkWorkloadOptions) run(cmd *cobra.Command, ro *rootOptions, files []string) error {
	wo, err := o.options()
	if err != nil {
		return err
	}
	objs, err := readManifests(cmd, files)
	if err != nil {
		return err
	}
	if o.imageIndex != "" {
		if wo.Image, err = o.loadImage(cmd, ro); err != nil {
			return err
		}
	}
	rep := kube.CheckWorkloads(objs, wo)
	if ro.output == outputSARIF {
		err = writeSARIF(cmd.OutOrStdout(), workloadRules, rep.Findings)
	} else {
		err = printWorkloadReport(cmd.OutOrStdout(), ro.output, rep)
	}
	if err != nil {
		return err
	}
	ro.githubOutput(cmd).checked("imgctl check-workload", rep.Passed, rep.Findings)
	if !rep.Passed {
		return ErrCheckFailed
	}
	return nil
}

func (o *checkWorkloadOptions) options() (kube.WorkloadOptions, error) {
	var wo kube.WorkloadOptions
	if o.windowsTaint != "" {
		t, err := kube.ParseTaint(o.windowsTaint)
		if err != nil {
			return wo, fmt.Errorf("%w: --windows-taint: %w", ErrUsage, err)
		}
		wo.WindowsTaint = t
	}
	return wo, nil
}

// readManifests reads every FILE argument, - from stdin (once).
func readManifests(cmd *cobra.Command, files []string) ([]kube.Object, error) {
	var out []kube.Object
	stdin := false
	for _, name := range files {
		var r io.Reader
		if name == "-" {
			if stdin {
				return nil, fmt.Errorf("%w: - (stdin) given twice", ErrUsage)
			}
			stdin, r = true, cmd.InOrStdin()
		} else {
			f, err := os.Open(name)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrUsage, err)
			}
			defer f.Close()
			r = f
		}
		objs, err := kube.ReadManifests(name, r)
		if err != nil {
			if errors.Is(err, kube.ErrInvalidManifest) {
				return nil, fmt.Errorf("%w: %w", ErrUsage, err)
			}
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// loadImage reads --image-index: an index, or a single manifest.
func (o *checkWorkloadOptions) loadImage(cmd *cobra.Command, ro *rootOptions) (*snapshot.Snapshot, error) {
	f, err := fetch(cmd, ro.registry(), o.imageIndex)
	if err != nil {
		return nil, fmt.Errorf("--image-index: %w", err)
	}
	snap, err := loadSnapshot(cmd.Context(), f, o.concurrency)
	if err != nil {
		return nil, fmt.Errorf("--image-index %s: %w", f.Ref, err)
	}
	return snap, nil
}

// printWorkloadReport writes the report as JSON or as file:line text.
func printWorkloadReport(w io.Writer, format string, rep *kube.WorkloadReport) error {
	if format == "json" {
		return writeJSON(w, rep)
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s:%d: %-7s %s %s: %s\n", f.File, f.Line, f.Severity, f.Rule, subject(f), f.Message)
	}
	status := "PASSED"
	if !rep.Passed {
		status = "FAILED"
	}
	_, err := fmt.Fprintf(w, "%s: %d error(s), %d finding(s)\n", status, rep.Errors(), len(rep.Findings))
	return err
}
