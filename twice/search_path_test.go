package twice_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// searchPathSchema is a dbmate migration that puts the application's tables
// in schema app and sets the database's search_path to it: the job's
// statements name its tables unqualified.
var searchPathSchema = pgfixture.FS(fstest.MapFS{"20240101000000_app.sql": {Data: []byte(`-- migrate:up
CREATE SCHEMA app;
CREATE TABLE app.visits (page text PRIMARY KEY, n int NOT NULL);
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET search_path TO app, public', current_database());
END $$;

-- migrate:down
DROP SCHEMA app CASCADE;
`)}})

// The check's database is a clone of the migrated template with the
// template's search_path: a job writing unqualified into app's table
// works, and is compared (the counting twin is flagged).
func TestAJobSeesTheSearchPathItsMigrationsSet(t *testing.T) {
	t.Parallel()
	job := func(count bool) twice.Job {
		q := `INSERT INTO visits VALUES ('home', 1) ON CONFLICT (page) DO NOTHING`
		if count {
			q = `INSERT INTO visits VALUES ('home', 1) ON CONFLICT (page) DO UPDATE SET n = visits.n + 1`
		}
		return twice.Job{Name: "count a visit", Schema: searchPathSchema, Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, q)
			return err
		}}
	}
	rep := twice.Check(t.Context(), job(false), twice.Schemas("app"))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("err %v\n%s", rep.Err, rep)
	}
	if got := rep.Reference.Snapshot.Rows("app.visits"); len(got) != 1 {
		t.Fatalf("app.visits after the clean run: %v", got)
	}
	rep = twice.Check(t.Context(), job(true), twice.Schemas("app"), twice.Only("sequential"))
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the counting twin is not flagged: err %v\n%s", rep.Err, rep)
	}
}
