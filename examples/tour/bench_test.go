package main

import (
	"context"
	"testing"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/twice"
)

// BenchmarkStoryCheck is one whole check of every story form with its
// default settings, as a test would run it: twice.AssertIdempotent for the
// fixed forms, twice.Check plus the expected verdict for the broken ones.
// BENCHMARKS.md's target for loyalty/ledger is at most 1 s.
func BenchmarkStoryCheck(b *testing.B) {
	for _, f := range stories() {
		b.Run(f.Title(), func(b *testing.B) {
			for b.Loop() {
				if !f.Broken() {
					twice.AssertIdempotent(b, f.Job, f.Options...)
					continue
				}
				rep := twice.Check(context.Background(), f.Job, f.Options...)
				if ok, verdict := story.Verdict(f, rep); !ok {
					b.Fatalf("%s\n%s", verdict, rep)
				}
			}
		})
	}
}
