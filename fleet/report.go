package fleet

import (
	"github.com/imgctl/imgctl/findings"
	"github.com/imgctl/imgctl/patchlevel"
	"github.com/imgctl/imgctl/rebase"
)

// Schema identifies the JSON report's shape (docs/patch.md); a change
// that removes or renames a field changes it.
const Schema = "imgctl.patch.report/v1"

// Outcome is what became of one image.
type Outcome string

// The outcomes of an image.
const (
	// Current: every variant is on its base's current image; nothing written.
	Current Outcome = "current"
	// Promoted: the rebased index was verified, signed and tagged (by
	// this run, or by an earlier one: Image.Earlier).
	Promoted Outcome = "promoted"
	// Failed: the image failed a check (Failure "check": the gate refused
	// it) or an error stopped it (Failure "error"); no release tag was
	// written for it.
	Failed Outcome = "failed"
	// Skipped: a dry run would have promoted it, or the reference was
	// listed twice.
	Skipped Outcome = "skipped"
)

// Kinds of failure (Image.Failure), which decide the exit code.
const (
	FailureCheck = "check"
	FailureError = "error"
)

// Side is one variant's os.version and base image digest, before or
// after the rebase.
type Side struct {
	OSVersion string `json:"os_version,omitempty"`
	Base      string `json:"base,omitempty"`
}

// Variant is one variant of an image in the report.
type Variant struct {
	Platform string `json:"platform"`
	Stale    bool   `json:"stale"`
	Before   Side   `json:"before"`
	After    Side   `json:"after"`
	// Digest is the variant's manifest after the rebase (its old one when
	// it was current).
	Digest string `json:"digest,omitempty"`
	// PatchLevel is how far behind a Windows variant was before the
	// rebase (`imgctl bases`' patch_level); nil for Linux variants.
	PatchLevel *patchlevel.Variant `json:"patch_level,omitempty"`
}

// Image is the report of one release reference.
type Image struct {
	// Ref is the release reference as listed; Digest what it pointed at.
	Ref     string  `json:"ref"`
	Digest  string  `json:"digest,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Failure is "check" or "error" for a failed image; Reason says why it
	// failed or was skipped, or how it was found.
	Failure string `json:"failure,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Tag is the new release tag and NewDigest the index it points at;
	// Stage is the staging tag the index was verified and signed at.
	Tag       string `json:"tag,omitempty"`
	NewDigest string `json:"new_digest,omitempty"`
	Stage     string `json:"stage,omitempty"`
	// Earlier is set when the promotion was found, made by an earlier run
	// (or an earlier month's: Via lists the promoted tags followed).
	Earlier bool     `json:"earlier,omitempty"`
	Via     []string `json:"via,omitempty"`
	// PatchTuesdaysBehind is the most Patch Tuesdays any Windows variant
	// was behind before the rebase; nil when none could be told.
	PatchTuesdaysBehind *int               `json:"patch_tuesdays_behind,omitempty"`
	Variants            []Variant          `json:"variants"`
	Findings            []findings.Finding `json:"findings,omitempty"`
}

// Summary counts a run's outcomes and its shared work.
type Summary struct {
	Shard    string `json:"shard"`
	Total    int    `json:"total"`
	Current  int    `json:"current"`
	Promoted int    `json:"promoted"`
	Failed   int    `json:"failed"`
	Skipped  int    `json:"skipped"`
	// Checks and Errors split Failed by kind.
	Checks int `json:"check_failures"`
	Errors int `json:"errors"`
	// BaseLookups and BaseConfigReads count base manifests and configs
	// read (each once per run); Requests every HTTP request of the run.
	BaseLookups     int64 `json:"base_lookups"`
	BaseConfigReads int64 `json:"base_config_reads"`
	Requests        int64 `json:"requests"`
}

// Report is the whole JSON report: what `imgctl patch -o json` prints,
// image by image as they finish, and what --merge-reports reads and
// writes.
type Report struct {
	Schema  string  `json:"schema"`
	Images  []Image `json:"images"`
	Summary Summary `json:"summary"`
}

// Add counts one image.
func (s *Summary) Add(im Image) {
	s.Total++
	switch im.Outcome {
	case Current:
		s.Current++
	case Promoted:
		s.Promoted++
	case Skipped:
		s.Skipped++
	case Failed:
		s.Failed++
		if im.Failure == FailureCheck {
			s.Checks++
		} else {
			s.Errors++
		}
	}
}

// variants turns rebase's status into the report's variants.
func variants(st rebase.Status) []Variant {
	out := make([]Variant, 0, len(st.Variants))
	for _, v := range st.Variants {
		before := Side{OSVersion: v.OldOSVersion, Base: v.OldBase}
		after, digest := before, v.Digest
		if v.Stale {
			after = Side{OSVersion: v.NewOSVersion, Base: v.NewBase}
			if after.OSVersion == "" {
				after.OSVersion = v.OldOSVersion
			}
			if v.NewDigest != "" {
				digest = v.NewDigest
			}
		} else if before.Base == "" {
			after.Base = v.NewBase
		}
		out = append(out, Variant{Platform: v.Platform, Stale: v.Stale, Before: before, After: after, Digest: digest})
	}
	return out
}
