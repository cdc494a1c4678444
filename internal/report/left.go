package report

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Left is what a check was told to skip or left out, and why, in the
// report's words.
type Left struct {
	DupEnqueueOff  string // WithoutDuplicateEnqueue's reason
	ConcurrencyOff string // WithoutConcurrency's reason
	OverlapsOff    string // WithoutOverlappingDeliveries
	StoppedEarly   string // the scenarios left out after a hang, and why
	LeftOut        string // what the budget left out of a long job
	WallLeft       string // what the wall budget left out
	WallNone       bool   // the wall budget left out every concurrent scenario
	PartialOK      string // PartialCheck's reason
	Covered        string // the crash points covered by an earlier one with the same world
	FollowUps      string // the follow-ups' note
	Shard          string // the line about the shard
}

// Partial names, in one line, what the wall budget left out of the check;
// it is "" when the check played every scenario it planned.
func (l Left) Partial() string {
	var parts []string
	if l.WallNone {
		parts = append(parts, "concurrent deliveries not checked: "+l.ConcurrencyOff)
	}
	if l.WallLeft != "" {
		parts = append(parts, l.WallLeft)
	}
	return strings.Join(parts, "; ")
}

// PartialText is how AssertIdempotent and ExpectIdempotent fail a partial
// check of job that found nothing in its scenarios.
func (l Left) PartialText(job string, scenarios int) string {
	return fmt.Sprintf("twice: %s: the check is partial: no promise broken in %s, but the wall budget did not play every scenario%s\n\n"+
		"A partial check is not a pass. Give the check room (TWICE_WALL=10m, -twice.wall=10m or twice.WallBudget(10*time.Minute); 0 for no bound), "+
		"or, where a partial check is enough, say why with twice.PartialCheck(reason).",
		reportfmt.Name(job), reportfmt.Count(scenarios, "scenario"), l.NotChecked())
}

// NotChecked names the scenarios the check was told to skip, and why.
func (l Left) NotChecked() string {
	s := ""
	if l.DupEnqueueOff != "" {
		s += "\nduplicate enqueue not checked: " + l.DupEnqueueOff
	}
	if l.ConcurrencyOff != "" {
		s += "\nconcurrent deliveries not checked: " + l.ConcurrencyOff
	}
	if l.OverlapsOff != "" && l.ConcurrencyOff == "" {
		s += "\noverlapping deliveries of one job not checked (two copies of it at once are): " + l.OverlapsOff
	}
	if l.StoppedEarly != "" {
		s += "\n" + l.StoppedEarly
	}
	if l.LeftOut != "" {
		s += "\n" + l.LeftOut
	}
	if l.WallLeft != "" {
		s += "\n" + l.WallLeft
	}
	if l.Partial() != "" && l.PartialOK != "" {
		s += "\na partial check is enough for this test (twice.PartialCheck): " + l.PartialOK
	}
	if l.Covered != "" {
		s += "\n" + l.Covered
	}
	s += l.FollowUps
	return s + l.Shard
}
