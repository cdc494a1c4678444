package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Redemptions of a coupon, with and without a unique constraint on the
// coupon.
var (
	redemptionsSchema = pgfixture.SQL(`
CREATE TABLE redemptions (
  coupon  text   NOT NULL,
  account bigint NOT NULL
);`)
	redemptionsUniqueSchema = pgfixture.SQL(`
CREATE TABLE redemptions (
  coupon  text   NOT NULL PRIMARY KEY,
  account bigint NOT NULL
);`)
)

// redeemIfAbsent is the one-statement check-then-act in autocommit: the
// belief "one statement is atomic" says it inserts once.
func redeemIfAbsent(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `INSERT INTO redemptions (coupon, account)
SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM redemptions WHERE coupon = $1)`, "SPRING", 7)
	return err
}

// redeemOnConflict is its fix: the unique key decides.
func redeemOnConflict(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `INSERT INTO redemptions (coupon, account) VALUES ($1, $2) ON CONFLICT (coupon) DO NOTHING`, "SPRING", 7)
	return err
}

// An autocommit statement is its own implicit transaction: two deliveries
// that both execute before either commits insert twice, and the timeline
// shows both executions before both commits.
func TestAutocommitInsertWhereNotExistsIsFlagged(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "redeem: insert where not exists", Schema: redemptionsSchema, Run: redeemIfAbsent}
	rep := check(t, job)
	found, _ := concurrentFindings(rep)
	require.Equal(t, []string{"overlap@1"}, found, rep.String())
	require.Len(t, rep.Findings, 1, "one delivery at a time, the statement sees the row: only running at once breaks it")
	text := rep.String()
	require.Contains(t, text, "not idempotent: overlap after point 1 of 2")
	tl, ok := rep.Timeline("overlap@1")
	require.True(t, ok)
	var order []string
	for _, line := range strings.Split(tl, "\n") {
		switch {
		case strings.Contains(line, "implicit COMMIT"):
			order = append(order, side(line)+" commit")
		case strings.Contains(line, "INSERT INTO redemptions"):
			order = append(order, side(line)+" insert")
		}
	}
	require.Equal(t, []string{"A insert", "B insert", "B commit", "A commit"}, order, tl)
}

// side says in which column of a timeline row the text is.
func side(line string) string {
	if l, _, ok := strings.Cut(line, "|"); ok && strings.TrimSpace(l) == "" {
		return "B"
	}
	return "A"
}

// The same insert on a unique key with ON CONFLICT passes every
// interleaving: the second insert waits for the first's commit, then does
// nothing.
func TestAutocommitInsertOnConflictPasses(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "redeem: on conflict", Schema: redemptionsUniqueSchema, Run: redeemOnConflict}
	rep := check(t, job, twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
	_, ran := concurrentFindings(rep)
	require.Contains(t, ran, "overlap@1")
	tl, ok := rep.Timeline("overlap@1")
	require.True(t, ok)
	require.Contains(t, tl, "... blocked on A", "B's insert waits for A's uncommitted row")
}

// Without playing the implicit transaction, a statement is an instant and
// the check agrees with the belief: that is what the switch is for.
func TestAutocommitAsInstantMissesTheRace(t *testing.T) {
	defer twice.PlayImplicitTransactions(false)()
	job := twice.Job{Name: "redeem: insert where not exists", Schema: redemptionsSchema, Run: redeemIfAbsent}
	rep := check(t, job, twice.ExploreAllInterleavings())
	require.True(t, rep.OK(), rep.String())
}

// The same seed gives the same scenarios and the same report text, run
// after run and with two scenarios played at once.
func TestImplicitTransactionReportsAreDeterministic(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "redeem: insert where not exists", Schema: redemptionsSchema, Run: redeemIfAbsent}
	opts := []twice.Option{twice.ExploreAllInterleavings(), twice.LoseStatementReplies()}
	first := check(t, job, opts...)
	require.Contains(t, first.Tokens(), "sql-reply-lost@1")
	for run := range 3 {
		o := opts
		if run == 2 {
			o = append(append([]twice.Option(nil), opts...), twice.Parallel(2))
		}
		rep := check(t, job, o...)
		require.Equal(t, first.Tokens(), rep.Tokens(), "run %d", run+2)
		require.Equal(t, first.String(), rep.String(), "run %d", run+2)
	}
}

// Under SERIALIZABLE, PostgreSQL fails one of the two overlapping implicit
// transactions at its commit; the job gets that serialization failure from
// its statement, as in autocommit, and the queue redelivers it.
func TestAutocommitSerializationFailureAtCommitReachesTheJob(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "redeem: insert where not exists, serializable", Schema: redemptionsSchema, Run: redeemIfAbsent}
	rep := check(t, job, twice.Isolation(twice.Serializable), twice.Only("overlap@1"))
	require.True(t, rep.OK(), rep.String())
	atts := rep.Scenarios[0].Attempts
	require.Len(t, atts, 3, "A, B, and the redelivery of the one that failed")
	failed := 0
	for _, a := range atts[:2] {
		if a.Err == nil {
			continue
		}
		failed++
		require.Equal(t, "40001", sqlState(a.Err), "%v", a.Err)
		require.True(t, strings.HasPrefix(a.Points[len(a.Points)-1].Label, "implicit COMMIT of: INSERT INTO redemptions"), "it failed at its commit: %v", a.Points)
	}
	require.Equal(t, 1, failed)
}
