package report

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Coverage is what a check ran, for the line a passing check logs under
// go test -v.
type Coverage struct {
	Job string
	// Kinds names each scenario's kind that ran ("crash-before"), as
	// twice's Kind.String does.
	Kinds []string
	// Covered counts the crash points covered by an earlier one with the
	// same world.
	Covered int
	// InterleavingsOff: the concurrent or the overlapping deliveries were
	// not checked.
	InterleavingsOff bool
	// Reference: the reference run had a delivery, whose Points interleave.
	Reference bool
	Points    int
	Isolation string
}

// Line says what a check ran, by kind.
func (c Coverage) Line() string {
	counts := map[string]int{}
	interleavings := 0
	for _, kind := range c.Kinds {
		switch kind {
		case "ack-lost":
			counts["ack lost"]++
		case "crash-before", "crash-after-last":
			counts["crashes"]++
		case "duplicate-enqueue", "duplicate-overlap", "duplicate-concurrent":
			counts["duplicate enqueue"]++
		case "crash-after-apply", "reply-lost", "late-redrive":
			counts["effect faults"]++
		case "statement-reply-lost":
			counts["statement replies lost"]++
		case "concurrent", "overlap":
			interleavings++
		}
	}
	var parts []string
	for _, k := range []string{"ack lost", "crashes", "duplicate enqueue", "effect faults", "statement replies lost"} {
		if k == "statement replies lost" && counts[k] == 0 {
			continue // played under the thorough budget or with LoseStatementReplies
		}
		s := fmt.Sprintf("%s %d", k, counts[k])
		if k == "crashes" && c.Covered > 0 {
			s += fmt.Sprintf(" (+%d covered)", c.Covered)
		}
		parts = append(parts, s)
	}
	switch {
	case c.InterleavingsOff:
		parts = append(parts, "interleavings not checked")
	case c.Reference:
		n := c.Points // the first deliveries interleave
		parts = append(parts, fmt.Sprintf("interleavings %d of %s (%s)", interleavings, reportfmt.CountText(concurrent.Interleavings(n, n)), c.Isolation))
	}
	return fmt.Sprintf("twice: %s: idempotent in %s: %s", reportfmt.Name(c.Job), reportfmt.Count(len(c.Kinds), "scenario"), strings.Join(parts, ", "))
}

// VaryingLine is what a verbose test logs about the values found to differ
// between two clean runs of job.
func VaryingLine(job string, varying []string) string {
	return fmt.Sprintf("twice: %s: compared by shape (they differ between two clean runs): %s", job, strings.Join(varying, ", "))
}
