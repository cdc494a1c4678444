package twice

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

// The holder of a lock is named from the points of the scenario's
// attempts: the latest attempt whose points ran on the holding backend,
// and, in the transaction open there, its first statement that locks.
func TestTheHolderOfALockIsNamedFromItsPoints(t *testing.T) {
	bg := context.Background()
	step := func(r *inject.Run, label string, pid uint32) {
		_, err := r.EnterStep(bg, faults.Step{Kind: faults.SQL, Label: label, Backend: pid})
		require.NoError(t, err)
	}
	c := &checker{}
	_, first := inject.Start(bg, "attempt 1 of job-1", inject.Plan{})
	c.NoteRan("attempt 1 of job-1", first, nil)
	step(first, "begin", 7)
	step(first, "UPDATE orders SET n = n + 1 WHERE id = 1", 7) // an earlier transaction on 7
	step(first, "commit", 7)
	step(first, "begin", 7)
	step(first, "SELECT id FROM orders WHERE id = 1", 7)
	step(first, "SELECT n FROM orders WHERE id = 1 FOR UPDATE", 7)
	step(first, "SELECT 1", 8)
	first.Finish() // it returned, and left the transaction on 7 open

	_, second := inject.Start(bg, "attempt 2 of job-1", inject.Plan{})
	c.NoteRan("attempt 2 of job-1", second, nil)
	step(second, "SELECT pg_advisory_lock(42)", 9)
	step(second, "SELECT pg_advisory_lock(42)", 10)

	require.Equal(t, "attempt 1 of job-1 (its point 6: SELECT n FROM orders WHERE id = 1 FOR UPDATE; it had returned with that transaction still open)",
		c.HolderName(second, 7, "twice-worker"))
	require.Equal(t, "attempt 1 of job-1 (its point 7: SELECT 1; it had returned with that transaction still open)", c.HolderName(second, 8, "twice-worker"))
	require.Equal(t, "attempt 2 of job-1 itself, on another of its connections (its point 1: SELECT pg_advisory_lock(42))", c.HolderName(second, 9, "twice-worker"))
	require.Equal(t, "a session of the check (application_name pgfixture) that no attempt of this scenario ran a statement on", c.HolderName(second, 11, "pgfixture"))
	require.Equal(t, "a session the check did not open (application_name psql)", c.HolderName(second, 12, "psql"))
	require.Equal(t, "a session the check did not open (application_name none)", c.HolderName(second, 12, ""))
}
