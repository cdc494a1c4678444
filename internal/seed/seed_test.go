package seed

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

type usageErr struct{ error }

// The seed runs once, on the first reset; every later reset restores its
// rows, random ones included.
func TestARandomSeedIsRestoredByEveryReset(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id serial PRIMARY KEY, r float8)"))
	ctx := context.Background()
	seeds := 0
	var on bool
	d := DB{DB: db, On: &on, Usage: func(err error) error { return usageErr{err} }, Seed: func(ctx context.Context, tx pgx.Tx) error {
		seeds++
		_, err := tx.Exec(ctx, "INSERT INTO t (r) VALUES (random())")
		return err
	}}
	var st State
	require.NoError(t, st.Reset(ctx, d))
	require.True(t, on)
	first := st.Compared()
	require.NotNil(t, first)
	_, err := db.Pool().Exec(ctx, "INSERT INTO t (r) VALUES (1)")
	require.NoError(t, err)
	require.NoError(t, st.Reset(ctx, d))
	again, err := db.Snapshot(ctx)
	require.NoError(t, err)
	require.Empty(t, pgfixture.Diff(first, again))
	require.Equal(t, 1, seeds)
}

// A seed that fails is the user's mistake.
func TestAFailingSeedIsMarkedAsUsage(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int)"))
	var on bool
	d := DB{DB: db, On: &on, Usage: func(err error) error { return usageErr{err} }, Seed: func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO nope VALUES (1)")
		return err
	}}
	var st State
	err := st.Reset(context.Background(), d)
	var u usageErr
	require.True(t, errors.As(err, &u), "%v", err)
	require.Contains(t, err.Error(), "twice: the seed data failed to insert")
}

func TestJoinAndThem(t *testing.T) {
	require.Equal(t, "a", joinAnd([]string{"a"}))
	require.Equal(t, "a, b and c", joinAnd([]string{"a", "b", "c"}))
	require.Equal(t, "it", them(1))
	require.Equal(t, "them", them(2))
}
