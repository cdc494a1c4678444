package twicetemporal_test

import (
	"strings"
	"testing"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

func check(t *testing.T, act twicetemporal.Activity, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twicetemporal.Check(t.Context(), act, opts...)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	return rep
}

// headlines lists the report's findings, one token and headline a line.
func headlines(rep *twice.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.Token + ": " + f.Headline + "\n")
	}
	return b.String()
}


var input = []any{BatchInput{Batch: 7, Items: []int{1, 2, 3}}}

func TestUnkeyedIncrementIsFlaggedInTemporalsWords(t *testing.T) {
	rep := check(t, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add }})
	if rep.OK() {
		t.Fatal("an unkeyed increment passed")
	}
	h := headlines(rep)
	t.Log(h)
	for _, want := range []string{"crash@end: ", "the worker died before reporting its completion, and the attempt timed out (StartToCloseTimeout 10m0s) and Temporal retried it"} {
		if !strings.Contains(h, want) {
			t.Errorf("headlines lack %q:\n%s", want, h)
		}
	}
}
