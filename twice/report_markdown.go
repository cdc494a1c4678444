package twice

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Markdown is the report for a reader and for GitHub: the text report in a
// fenced block, then a Mermaid sequence diagram of each finding's timeline
// (the attempts, PostgreSQL and each effect provider as participants, every
// point, the crash marker, and in concurrent scenarios the lock waits and who
// released them). Like the text, it is a deterministic function of the check.
func (r *Report) Markdown() string { return reportfmt.Text(r.markdown()) }

func (r *Report) markdown() string {
	var b strings.Builder
	head, _, _ := strings.Cut(r.String(), "\n")
	fmt.Fprintf(&b, "## %s\n\n```text\n%s\n```\n", head, r.String())
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n### %s\n\n", f.Headline)
		fmt.Fprintf(&b, "Replay: `%s`\n", replayLine(r.testName, f.Token))
		if f.run != nil {
			fmt.Fprintf(&b, "\n```mermaid\n%s```\n", mermaid(f.run))
		}
	}
	return b.String()
}

// mermaid draws a scenario's attempts as a Mermaid sequenceDiagram.
func mermaid(sr *ScenarioRun) string { return report.Mermaid(reportRun(sr)) }
