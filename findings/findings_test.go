package findings

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestJSON pins the JSON of the shapes the checks produce: verify's (no
// file or line), lint's (no digest) and a workload finding's, each field
// in its place and the unset ones left out.
func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Finding
		want string
	}{
		{"verify", Finding{Rule: "missing-os-version", Severity: Error, Digest: "sha256:ab", Platform: "windows/amd64", Message: "m"},
			`{"rule":"missing-os-version","severity":"error","digest":"sha256:ab","platform":"windows/amd64","message":"m"}`},
		{"verify, no entry", Finding{Rule: "missing-platform", Severity: Error, Message: "m"},
			`{"rule":"missing-platform","severity":"error","message":"m"}`},
		{"lint", Finding{Rule: "run-in-windows-stage", Severity: Error, File: "Dockerfile", Line: 2, Platform: "windows/amd64", Stage: "stage-0", Message: "m"},
			`{"rule":"run-in-windows-stage","severity":"error","file":"Dockerfile","line":2,"platform":"windows/amd64","stage":"stage-0","message":"m"}`},
		{"lint, every platform", Finding{Rule: "invalid-exec-form", Severity: Error, File: "Dockerfile", Line: 3, Stage: "stage-0", Message: "m"},
			`{"rule":"invalid-exec-form","severity":"error","file":"Dockerfile","line":3,"stage":"stage-0","message":"m"}`},
		{"workload", Finding{Rule: "no-memory-limit", Severity: Warning, File: "w.yaml", Line: 9, Object: "Deployment/api", Container: "api", Message: "m"},
			`{"rule":"no-memory-limit","severity":"warning","file":"w.yaml","line":9,"object":"Deployment/api","container":"api","message":"m"}`},
	} {
		b, err := json.Marshal(tc.f)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v\nwant %s", tc.name, b, err, tc.want)
		}
		var back Finding
		if err := json.Unmarshal(b, &back); err != nil || back != tc.f {
			t.Errorf("%s: decoded %+v, %v", tc.name, back, err)
		}
	}
}

func TestErrorsCountPassed(t *testing.T) {
	fs := []Finding{{Rule: "a", Severity: Warning}, {Rule: "b", Severity: Error}, {Rule: "c", Severity: "note"}, {Rule: "d", Severity: Error}}
	if got := Errors(fs); !slices.Equal(got, []Finding{fs[1], fs[3]}) {
		t.Errorf("Errors = %+v", got)
	}
	if Count(fs, Error) != 2 || Count(fs, Warning) != 1 || Count(nil, Error) != 0 {
		t.Errorf("Count: %d errors, %d warnings", Count(fs, Error), Count(fs, Warning))
	}
	if Passed(fs) || !Passed(fs[:1]) || !Passed(nil) || Errors(fs[:1]) != nil {
		t.Error("Passed: want false with an error, true without")
	}
}
