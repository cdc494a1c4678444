package twice_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The job runs as it runs in production: the check's own settings never
// decide a verdict (issue 30).

var profileSchema = pgfixture.SQL(`
CREATE TABLE profiles (
  id    bigint PRIMARY KEY,
  tags  jsonb  NOT NULL DEFAULT '[]',
  attrs jsonb  NOT NULL DEFAULT '{}'
);`)

var profileSeed = twice.SeedSQL(`INSERT INTO profiles (id) VALUES (1)`)

// setProfile binds a Go []string and a map[string]any to jsonb columns:
// pgx's default exec mode describes the statement and sends them as JSON.
func setProfile(ctx context.Context, a *twice.Attempt) error {
	_, err := a.Pool.Exec(ctx, `UPDATE profiles SET tags = $1, attrs = $2 WHERE id = 1`,
		[]string{"gold", "early"}, map[string]any{"plan": "pro", "seats": 3})
	return err
}

func TestSliceAndMapToJSONBOnAPoolPass(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "set profile", Schema: profileSchema, Seed: profileSeed, Run: setProfile}

	// What production does: a default pgxpool.
	db := pgfixture.New(t, profileSchema)
	pool, err := pgxpool.NewWithConfig(context.Background(), productionConfig(t, db))
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(context.Background(), `INSERT INTO profiles (id) VALUES (1)`)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), `UPDATE profiles SET tags = $1, attrs = $2 WHERE id = 1`,
		[]string{"gold", "early"}, map[string]any{"plan": "pro", "seats": 3})
	require.NoError(t, err, "a default pgxpool takes the statement")

	rep := twice.Check(context.Background(), job)
	require.NoError(t, rep.Err)
	require.True(t, rep.OK(), rep.String())
	// One point: the statement, not the Parse/Describe pgx sends under it on
	// a cold connection.
	require.Len(t, rep.Reference.Attempts[0].Points, 1, rep.String())
	// The same rows as the check's clean run wrote.
	prod, err := db.Snapshot(context.Background())
	require.NoError(t, err)
	require.Equal(t, prod.String(), rep.Reference.Snapshot.String())
	require.Contains(t, prod.String(), `"gold"`)
}

// warmTwice runs the same statement twice on one attempt's connection: on a
// cold connection the first is prepared under the statement, the second
// comes from pgx's cache; both are one point each, as an explicit prepare is.
func warmTwice(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		for i := 0; i < 2; i++ {
			if _, err := tx.Exec(ctx, `UPDATE profiles SET tags = tags || $1 WHERE id = 1`, []string{"x"}); err != nil {
				return err
			}
		}
		_, err := tx.Prepare(ctx, "explicit", `SELECT tags FROM profiles WHERE id = $1`)
		return err
	})
}

func TestPointsAreTheStatementsOnColdAndWarmConnections(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "warm twice", Schema: profileSchema, Seed: profileSeed, Run: warmTwice}
	rep := twice.Check(context.Background(), job, twice.Only("sequential"))
	require.NoError(t, rep.Err)
	labels := func(a twice.AttemptRecord) []string {
		var out []string
		for _, p := range a.Points {
			out = append(out, p.Label)
		}
		return out
	}
	want := []string{"begin", "UPDATE profiles SET tags = tags || $1 WHERE id = 1", "UPDATE profiles SET tags = tags || $1 WHERE id = 1",
		"PREPARE SELECT tags FROM profiles WHERE id = $1", "commit"}
	require.Equal(t, want, labels(rep.Reference.Attempts[0]))
	require.Len(t, rep.Scenarios, 1)
	sr := rep.Scenarios[0]
	require.Len(t, sr.Attempts, 2, rep.String())
	require.Equal(t, want, labels(sr.Attempts[0]))
	require.Equal(t, want, labels(sr.Attempts[1]), "the second delivery runs on the warm connection: the same points")
}
