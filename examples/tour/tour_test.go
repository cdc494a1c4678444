package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

func TestTour(t *testing.T) {
	var out strings.Builder
	code := run(&out, []string{"-q"})
	require.Equal(t, 0, code, out.String())
	lines := strings.Split(out.String(), "\n")
	for _, f := range stories() {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, "✓ "+f.Title()+": ")
		}
		require.True(t, found, "no verdict line for %s:\n%s", f.Title(), out.String())
	}
	require.NotContains(t, out.String(), "✗")
	require.Contains(t, out.String(), "every verdict as expected")
	for _, story := range []string{"loyalty", "receipt", "invoice", "payout", "refund", "orderstatus", "processedjobs", "storedresults", "riverjobs", "shipped"} {
		require.Contains(t, out.String(), "✓ "+story+"/")
	}
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
