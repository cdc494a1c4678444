package twice_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// A call on the attempt's handles is the attempt's: a data layer that never
// takes a context is checked like any other (issue 30).

// pointsStore is a storage layer in the style of many self-hosted apps: it
// holds a *sql.DB and never takes a context (db.Query, db.Begin, tx.Exec
// pass context.Background()).
type pointsStore struct{ db *sql.DB }

func (s pointsStore) balance(id int) (int, error) {
	rows, err := s.db.Query(`SELECT points FROM customers WHERE id = $1`, id) //nolint:noctx // the point of the test
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var p int
	for rows.Next() {
		if err := rows.Scan(&p); err != nil {
			return 0, err
		}
	}
	return p, rows.Err()
}

// addUnguarded adds 50 points in a transaction: not idempotent.
func (s pointsStore) addUnguarded(id int) error {
	tx, err := s.db.Begin() //nolint:noctx
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`UPDATE customers SET points = points + 50 WHERE id = $1`, id); err != nil { //nolint:noctx
		return err
	}
	return tx.Commit()
}

// addOnce adds 50 points for an order once: the ledger's unique constraint
// refuses the second row, and the balance moves only with one.
func (s pointsStore) addOnce(id, order int) error {
	tx, err := s.db.Begin() //nolint:noctx
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(ledgerCTESQL, id, order); err != nil { //nolint:noctx
		return err
	}
	return tx.Commit()
}

func TestAContextFreeDataLayerOnADBIsChecked(t *testing.T) {
	t.Parallel()
	unguarded := loyaltyJob("context-free increment", func(_ context.Context, a *twice.Attempt) error {
		s := pointsStore{a.DB}
		if _, err := s.balance(77); err != nil {
			return err
		}
		return s.addUnguarded(77)
	})
	rep, tokens := findingTokens(t, unguarded)
	require.Contains(t, tokens, "sequential", rep.String())
	require.NotContains(t, rep.String(), "bypassed")
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	// Its statements are points of the attempt, crashed like any other.
	var labels []string
	for _, p := range rep.Reference.Attempts[0].Points {
		labels = append(labels, p.Label)
	}
	require.Equal(t, []string{"SELECT points FROM customers WHERE id = $1", "begin", "UPDATE customers SET points = points + 50 WHERE id = $1", "commit"}, labels)

	guarded := loyaltyJob("context-free ledger", func(_ context.Context, a *twice.Attempt) error {
		return pointsStore{a.DB}.addOnce(77, 1001)
	})
	rep, tokens = findingTokens(t, guarded)
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "crash@3")
}

var fkSchema = pgfixture.SQL(`
CREATE TABLE accounts (id bigint PRIMARY KEY);
CREATE TABLE fees (
  invoice    text   PRIMARY KEY,
  account_id bigint NOT NULL REFERENCES accounts (id),
  cents      int    NOT NULL
);`)

// chargeFee uses the rollback idiom: defer tx.Rollback(context.Background()).
func chargeFee(account int) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		tx, err := a.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(ctx, `INSERT INTO fees (invoice, account_id, cents) VALUES ('inv-7', $1, 250) ON CONFLICT DO NOTHING`, account); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
}

func TestTheRollbackIdiomKeepsTheRealErrorAsTheHeadline(t *testing.T) {
	t.Parallel()
	seed := twice.SeedSQL(`INSERT INTO accounts (id) VALUES (1)`)
	broken := twice.Job{Name: "fee for a missing account", Schema: fkSchema, Seed: seed, Run: chargeFee(2)}
	rep, tokens := findingTokens(t, broken)
	require.Equal(t, []string{"once"}, tokens)
	f := rep.Findings[0]
	require.Equal(t, "the job failed on a clean run: the reference run (one clean delivery)", f.Headline)
	require.Len(t, f.Problems, 1, rep.String())
	require.Contains(t, f.Problems[0].Text, "violates foreign key constraint")
	require.Contains(t, f.Problems[0].Text, "SQLSTATE 23503")
	require.False(t, strings.Contains(rep.String(), "bypassed"), rep.String())

	fixed := twice.Job{Name: "fee for an account", Schema: fkSchema, Seed: seed, Run: chargeFee(1)}
	rep, tokens = findingTokens(t, fixed)
	require.Empty(t, tokens, rep.String())
}
