package twice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// pointsRepo is a component built on a pool that it closes when done, as
// many constructors do.
type pointsRepo struct{ pool *pgxpool.Pool }

func (s pointsRepo) setPoints(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `UPDATE customers SET points = 50 WHERE id = 77`)
	return err
}

const closedPoolRefusal = `twice: the job closed the check's pool (a.Pool.Close(), or a component given a.Pool that closes it, ` +
	`as a constructor's defer pool.Close() does): the statements on it after that failed with "closed pool", so the check proves nothing about the job; ` +
	`a.Pool belongs to the check, which closes it: do not close it (give a component that closes its pool one of its own, ` +
	`pgxpool.NewWithConfig(ctx, a.Pool.Config()))`

// A job that closes a.Pool is told so, not "not idempotent" with the diff
// of the rows the later deliveries could not write (issue 43).
func TestAJobThatClosesThePoolIsToldSo(t *testing.T) {
	t.Parallel()
	t.Run("after its work", func(t *testing.T) {
		t.Parallel()
		rep := twice.Check(context.Background(), loyaltyJob("closes the pool", func(ctx context.Context, a *twice.Attempt) error {
			s := pointsRepo{pool: a.Pool}
			defer s.pool.Close()
			return s.setPoints(ctx)
		}))
		require.EqualError(t, rep.Err, closedPoolRefusal)
		require.Empty(t, rep.Findings)
		require.Empty(t, rep.KeptDatabase)
	})
	t.Run("before its work", func(t *testing.T) {
		t.Parallel()
		rep := twice.Check(context.Background(), loyaltyJob("closes the pool first", func(ctx context.Context, a *twice.Attempt) error {
			a.Pool.Close()
			return pointsRepo{pool: a.Pool}.setPoints(ctx)
		}))
		require.EqualError(t, rep.Err, closedPoolRefusal)
	})
	t.Run("a pool of its own", func(t *testing.T) { // the fixed twin
		t.Parallel()
		rep := twice.Check(context.Background(), loyaltyJob("closes a pool of its own", func(ctx context.Context, a *twice.Attempt) error {
			pool, err := pgxpool.NewWithConfig(ctx, a.Pool.Config())
			if err != nil {
				return err
			}
			s := pointsRepo{pool: pool}
			defer s.pool.Close()
			return s.setPoints(ctx)
		}))
		require.NoError(t, rep.Err)
		require.True(t, rep.OK(), rep.String())
	})
}
