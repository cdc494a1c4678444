package twice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// A deposit guarded against redelivery: the job's ID is recorded in the
// deposit's transaction, and a delivery that finds it does nothing.
var depositSchema = pgfixture.SQL(`
CREATE TABLE accounts (id bigint PRIMARY KEY, balance int NOT NULL);
CREATE TABLE processed (job_id text PRIMARY KEY);
CREATE TABLE failures (job_id text NOT NULL, reason text NOT NULL);`)

var depositSeed = twice.SeedSQL(`INSERT INTO accounts VALUES (1, 0)`)

// deposit is the guarded deposit; onError is its error path.
func deposit(onError func(ctx context.Context, a *twice.Attempt, err error) error) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		err := pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO processed (job_id) VALUES ($1) ON CONFLICT DO NOTHING`, "deposit-1")
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE accounts SET balance = balance + 10 WHERE id = 1`)
			return err
		})
		if err != nil {
			return onError(ctx, a, err)
		}
		return nil
	}
}

// recordAndAck treats an error as "not done": it records the failure and
// acks the job.
func recordAndAck(ctx context.Context, a *twice.Attempt, err error) error {
	_, ferr := a.Pool.Exec(ctx, `INSERT INTO failures (job_id, reason) VALUES ($1, 'deposit failed')`, "deposit-1")
	return ferr
}

// returnIt hands the error to the queue, which redelivers.
func returnIt(_ context.Context, _ *twice.Attempt, err error) error { return err }

// The COMMIT was applied but its reply was lost: the job that records a
// failure and acks leaves a failure for a deposit that happened; the one
// that returns the error is redelivered, finds its job ID, and does nothing.
func TestStatementReplyLostAtCommit(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "deposit: record the failure and ack", Schema: depositSchema, Seed: depositSeed, Run: deposit(recordAndAck)}
	rep := check(t, job, twice.LoseStatementReplies())
	var found []string
	for _, f := range rep.Findings {
		found = append(found, f.Token)
	}
	require.Contains(t, found, "sql-reply-lost@4", rep.String())
	f := findingOf(t, rep, "sql-reply-lost@4")
	require.Equal(t, "not idempotent: reply lost at point 4 of 4 (commit): PostgreSQL applied and committed it, but the job saw a connection error", f.Headline)
	text := rep.String()
	require.Contains(t, text, "+ (job_id='deposit-1', reason='deposit failed')")

	fixed := twice.Job{Name: "deposit: return the error", Schema: depositSchema, Seed: depositSeed, Run: deposit(returnIt)}
	rep = check(t, fixed, twice.LoseStatementReplies())
	require.True(t, rep.OK(), rep.String())
	require.Contains(t, rep.Tokens(), "sql-reply-lost@4")
	sr := scenarioOf(t, rep, "sql-reply-lost@4")
	require.Len(t, sr.Attempts, 2, "the lost reply, then the redelivery that finds the job ID")
	require.Error(t, sr.Attempts[0].Err, "the job saw the connection break")
	require.NotErrorIs(t, sr.Attempts[0].Err, faults.ErrCrashed, "a connection error, not a crash: the job carried on")
}

func findingOf(t *testing.T, rep *twice.Report, token string) twice.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Token == token {
			return f
		}
	}
	t.Fatalf("no finding %s in:\n%s", token, rep.String())
	return twice.Finding{}
}

func scenarioOf(t *testing.T, rep *twice.Report, token string) *twice.ScenarioRun {
	t.Helper()
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Token() == token {
			return sr
		}
	}
	t.Fatalf("no scenario %s in %v", token, rep.Tokens())
	return nil
}
