package payout_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) {
	story.RapidChecks(5)
	os.Exit(pgfixture.Main(m))
}

func check(t *testing.T, job twice.Job, opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	return rep
}
