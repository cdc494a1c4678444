package twice

import (
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Markdown is the report for a reader and for GitHub: the text report in a
// fenced block, then a Mermaid sequence diagram of each finding's timeline
// (the attempts, PostgreSQL and each effect provider as participants, every
// point, the crash marker, and in concurrent scenarios the lock waits and who
// released them). Like the text, it is a deterministic function of the check.
func (r *Report) Markdown() string { return reportfmt.Text(r.markdown()) }

func (r *Report) markdown() string { return report.Markdown(r.finished(true)) }
