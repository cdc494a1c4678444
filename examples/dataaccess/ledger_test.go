package dataaccess_test

import (
	"context"
	_ "embed"
	"slices"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The job: reward order 9812 with 50 points. Broken, it adds them; fixed,
// it records the order in a rewards table and adds them only when that
// insert did, in one transaction.

// schema is sqlc's schema.sql, which sqlc generated its packages from.
//
//go:embed sqlc/schema.sql
var schemaSQL string

var schema = pgfixture.SQL(schemaSQL)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`)

const orderID, customerID = 9812, 77

// ledger is one library's two forms of the job.
type ledger struct {
	broken, fixed func(ctx context.Context, a *twice.Attempt) error
}

func tokens(rep *twice.Report) (out []string) {
	for _, f := range rep.Findings {
		out = append(out, f.Token)
	}
	return out
}

// checkLedger checks both forms: the fixed one passes every scenario, the
// broken one is flagged where the increment runs again.
func checkLedger(t *testing.T, name string, l ledger) {
	t.Helper()
	twice.AssertIdempotent(t, twice.Job{Name: name + " fixed", Schema: schema, Seed: seed, Run: l.fixed})
	rep := twice.Check(t.Context(), twice.Job{Name: name + " broken", Schema: schema, Seed: seed, Run: l.broken})
	if rep.Err != nil || rep.OK() {
		t.Fatalf("the broken %s job was not flagged:\n%s", name, rep)
	}
	for _, want := range []string{"sequential", "crash@end", "duplicate-enqueue"} {
		if !slices.Contains(tokens(rep), want) {
			t.Errorf("the broken %s job was not flagged by %s:\n%s", name, want, rep)
		}
	}
}
