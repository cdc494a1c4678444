package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

// tourRun is the -run pattern of TestTour in the fast suite: one story,
// broken and fixed forms, through the whole tour. The long tests play every
// story. Each story's form is still checked in the fast suite by its own
// package's tests; TestEveryCheckIsDeterministic judges each story's first
// form with story.Verdict as the tour does (under the quick budget, the
// tour under the default one), every form with the long tests.
const tourRun = "^loyalty/"

// TestTour runs the tour as `go run ./examples/tour -q` does and requires a
// verdict line for every story form it plays, every one as expected.
func TestTour(t *testing.T) {
	args, forms := []string{"-q", "-run", tourRun}, tourForms(t, tourRun)
	if longtest.Enabled() {
		args, forms = []string{"-q"}, stories()
	}
	var out strings.Builder
	code := run(&out, args)
	require.Equal(t, 0, code, out.String())
	lines := strings.Split(out.String(), "\n")
	for _, f := range forms {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, "✓ "+f.Title()+": ")
		}
		require.True(t, found, "no verdict line for %s:\n%s", f.Title(), out.String())
	}
	require.NotContains(t, out.String(), "✗")
	require.Contains(t, out.String(), fmt.Sprintf("every verdict as expected: %d jobs, ", len(forms)))
	if !longtest.Enabled() {
		return
	}
	for _, story := range []string{"loyalty", "receipt", "invoice", "payout", "refund", "orderstatus", "processedjobs", "storedresults", "riverjobs", "shipped", "watermillorders"} {
		require.Contains(t, out.String(), "✓ "+story+"/")
	}
}

// tourForms are the story forms whose title matches pattern: at least one
// broken and one fixed.
func tourForms(t *testing.T, pattern string) []story.Form {
	t.Helper()
	forms := matching(regexp.MustCompile(pattern))
	broken := 0
	for _, f := range forms {
		if f.Broken() {
			broken++
		}
	}
	require.True(t, broken > 0 && broken < len(forms), "the fast tour plays %d forms, %d broken: it needs broken and fixed ones", len(forms), broken)
	return forms
}

func TestFlags(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 2, run(&out, []string{"-run", "nothing-matches-this"}))
	require.Contains(t, out.String(), `no job matches -run "nothing-matches-this"`)

	out.Reset()
	require.Equal(t, 2, run(&out, []string{"-nope"}))
	require.Contains(t, out.String(), "usage: go run ./examples/tour")

	out.Reset()
	require.Equal(t, 2, run(&out, []string{"extra"}))
	require.Contains(t, out.String(), "unexpected arguments: extra")
}
