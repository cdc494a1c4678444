package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// TestCrashStatesNeverChangeAVerdict checks every story form twice: with
// crash states explored once (the default) and with twice.EveryCrashPoint.
// The findings must be the same, scenario for scenario and word for word;
// the log says how many scenarios the cache saved on each story.
func TestCrashStatesNeverChangeAVerdict(t *testing.T) {
	longtest.Skip(t, "checks every story twice")
	srv, err := pgfixture.Shared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range stories() {
		t.Run(f.Title(), func(t *testing.T) {
			t.Parallel()
			opts := append([]twice.Option{twice.OnServer(srv), twice.ScheduleSeed(determinismSeed)}, f.Options...)
			cached := twice.Check(t.Context(), f.Job, opts...)
			every := twice.Check(t.Context(), f.Job, append(opts, twice.EveryCrashPoint())...)
			if cached.Err != nil || every.Err != nil {
				t.Fatalf("check failed: %v / %v", cached.Err, every.Err)
			}
			if got, want := findingsText(cached), findingsText(every); got != want {
				t.Fatalf("the crash-state cache changed the findings of %s:\n%s", f.Title(), lineDiff(want, got))
			}
			t.Logf("%s: %d scenarios with the cache, %d without", f.Title(), len(cached.Scenarios), len(every.Scenarios))
		})
	}
}

// findingsText is every finding of a report, in full.
func findingsText(rep *twice.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "%s\n%s\n%s\n%v\n%v\n%v\n%v\n", f.Token, f.Headline, f.Timeline, f.Database, f.Effects, f.Problems, f.Hints)
	}
	return b.String()
}
