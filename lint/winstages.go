package lint

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/imgctl/imgctl/findings"
)

// windowsStageFindings checks the stages that the target needs when building
// for platform p and whose effective platform is Windows.
func windowsStageFindings(g *stageGraph, file string, p v1.Platform, reported map[*parser.Node]bool) []findings.Finding {
	var out []findings.Finding
	plat := p.String()
	image := g.imageStages(p)
	for _, s := range g.reachable() {
		if s.platform.OS != "windows" {
			continue
		}
		for _, cmd := range s.st.Commands {
			f := findings.Finding{Severity: findings.Error, File: file, Line: startLine(cmd.Location()), Platform: plat, Stage: s.name}
			switch c := cmd.(type) {
			case *instructions.RunCommand:
				f.Rule = RuleRunInWindowsStage
				f.Message = fmt.Sprintf("stage %q runs on windows when building %s: a Linux builder cannot RUN %q; "+
					"move the work to a FROM --platform=$BUILDPLATFORM stage and COPY --from it", s.name, plat, strings.TrimSpace(c.String()))
			case *instructions.CopyCommand:
				if !c.Link || !image[s] {
					continue
				}
				f.Rule, f.Message = RuleLinkInWindowsStage, linkMessage("COPY", s.name, plat)
			case *instructions.AddCommand:
				if !c.Link || !image[s] {
					continue
				}
				f.Rule, f.Message = RuleLinkInWindowsStage, linkMessage("ADD", s.name, plat)
			case *instructions.EntrypointCommand:
				if !c.PrependShell || lineReported(reported, f.Line) {
					continue
				}
				f.Rule, f.Message = RuleShellFormEntrypoint, shellFormMessage("ENTRYPOINT", s.name)
			case *instructions.CmdCommand:
				if !c.PrependShell || lineReported(reported, f.Line) {
					continue
				}
				f.Rule, f.Message = RuleShellFormEntrypoint, shellFormMessage("CMD", s.name)
			default:
				continue
			}
			out = append(out, f)
		}
	}
	return out
}

func linkMessage(instr, stage, plat string) string {
	return fmt.Sprintf("%s --link in stage %q, whose filesystem becomes the %s image: a --link layer has no parent, "+
		"so BuildKit writes it without the Windows layout (Files/, Hives/) and the files would not appear under C:\\; "+
		"drop --link", instr, stage, plat)
}

func shellFormMessage(instr, stage string) string {
	return fmt.Sprintf("%s in windows stage %q is in shell form: the builder wraps it in a shell "+
		"(cmd /S /C in BuildKit, /bin/sh -c in others); use exec form, e.g. %s [\"C:\\\\app\\\\hello.exe\"]", instr, stage, instr)
}

func lineReported(reported map[*parser.Node]bool, line int) bool {
	for n := range reported {
		if n.StartLine == line {
			return true
		}
	}
	return false
}
