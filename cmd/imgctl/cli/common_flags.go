package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// The flags several verbs take, each registered here once with one help
// text: --force, --dry-run, --no-verify, --windows, --jobs and --at. A verb (a
// new one too) adds them with these helpers rather than with its own
// fl.BoolVar(..., "force", ...), so that the same flag means, says and
// defaults to the same on every verb; docs/commands.md lists each verb's
// flags, and TestDocsCommandFlags compares that list with the help.

// addForceFlag registers --force: a verb that writes a tag overwrites an
// existing one only with it.
func addForceFlag(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, "force", false, "overwrite an existing tag")
}

// addDryRunFlag registers --dry-run; what is what the verb prints instead
// of pushing it ("the index", "the plan (...)").
func addDryRunFlag(fl *pflag.FlagSet, p *bool, what string) {
	fl.BoolVar(p, "dry-run", false, "print "+what+" that would be pushed, and push nothing")
}

// addNoVerifyFlag registers --no-verify: a verb that pushes an index
// verifies it (as imgctl verify does) unless told not to.
func addNoVerifyFlag(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, "no-verify", false, "skip verify after the push")
}

// windowsTargetsHelp is what --windows takes where it names the Windows
// node builds an index is verified against.
const windowsTargetsHelp = "Windows node builds to verify against: ltsc2019, ltsc2022, ltsc2025, a build number or a version"

// addWindowsTargetsFlag registers --windows as verify, index and rebase
// take it: the Windows node builds to verify against; def says what
// verifying without it checks and why. (build, lint and bake's --windows
// names the releases to build instead, addWindowsReleasesFlag.)
func addWindowsTargetsFlag(fl *pflag.FlagSet, p *[]string, def string) {
	fl.StringSliceVar(p, "windows", nil, windowsTargetsHelp+" (default "+def+")")
}

// defaultTargets is --windows' default where an index is verified as it
// is: the two LTSC releases still in mainstream support.
const defaultTargets = "ltsc2022,ltsc2025 when the index has Windows variants"

// addWindowsReleasesFlag registers --windows as build and lint take it:
// the Windows releases to build, one variant each (build's verify then
// checks those builds).
func addWindowsReleasesFlag(fl *pflag.FlagSet, p *[]string) {
	fl.StringSliceVar(p, "windows", nil, "Windows releases to build, one variant each, e.g. ltsc2022,ltsc2025")
}

// jobsWork is what a verb's --jobs counts, its default, and why that
// default: the work differs in cost, so the defaults differ.
type jobsWork struct {
	what string
	def  int
	why  string
}

// The kinds of work --jobs counts.
var (
	// jobsReads: manifests and configs, documents of a few kilobytes.
	jobsReads = jobsWork{"manifest and config reads", snapshot.DefaultConcurrency,
		"small documents: more at once than blob transfers"}
	// jobsTransfers: blob copies and uploads, which may be gigabytes.
	jobsTransfers = jobsWork{"registry reads and blob transfers", registry.DefaultJobs,
		"blobs may be gigabytes: fewer at once than manifest reads"}
	// jobsTargets: bake's targets, each whole builds on the daemons.
	jobsTargets = jobsWork{"targets built", 2,
		"each is whole BuildKit solves on shared daemons: fewest at once"}
	// jobsImages: patch's images, each a rebase (blob mounts), a check, a
	// signature and a promotion.
	jobsImages = jobsWork{"images worked on", fleet.DefaultJobs,
		"each is a rebase, a check, a signature and a promotion, with blob mounts: as many as blob transfers"}
)

// addJobsFlag registers --jobs for work: how many at once, 1 or more (a
// smaller value is a usage error, exit 2, whatever the verb). The help
// says why the default is what it is; pflag adds the default itself.
func addJobsFlag(fl *pflag.FlagSet, p *int, work jobsWork) {
	*p = work.def
	fl.Var((*jobsValue)(p), "jobs", fmt.Sprintf("%s at once, 1 or more (%s)", work.what, work.why))
}

// jobsValue is --jobs' value: an int of 1 or more.
type jobsValue int

func (v *jobsValue) String() string { return strconv.Itoa(int(*v)) }

// Type is the value's name in the help, as for pflag's own ints.
func (v *jobsValue) Type() string { return "int" }

// Set parses s, refusing less than 1.
func (v *jobsValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("%d: want 1 or more", n)
	}
	*v = jobsValue(n)
	return nil
}

// addAtFlag registers --at, the date a patch-level report or limit is
// taken on, so that a report is reproducible; what says what that date
// decides on the verb.
func addAtFlag(fl *pflag.FlagSet, p *string, what string) {
	fl.StringVar(p, "at", "", "the date, YYYY-MM-DD (UTC; default today), "+what)
}
