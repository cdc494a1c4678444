package pgfixture_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
)

var schema = pgfixture.SQL(`
	CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, created_at timestamptz DEFAULT now());
	CREATE TABLE rewards (customer_id int REFERENCES customers, reason text, points int);
	INSERT INTO customers (name) VALUES ('Ann');`)

func ExampleShared() {
	ctx := context.Background()
	srv, err := pgfixture.Shared(ctx) // started once per test binary; Main closes it
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	var n int
	_ = db.Pool().QueryRow(ctx, "SELECT count(*) FROM customers").Scan(&n)
	fmt.Println("customers after migrations:", n)
	// Output: customers after migrations: 1
}

func ExampleNew() {
	// In a test:
	test := func(t *testing.T) {
		db := pgfixture.New(t, schema) // dropped at the end, kept (and logged) if t failed
		_, err := db.Pool().Exec(context.Background(), "INSERT INTO rewards VALUES (1, 'signup', 10)")
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = test
}

func ExampleDB_Snapshot() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	_, _ = db.Pool().Exec(ctx, "INSERT INTO rewards VALUES (1, 'order_reward', 50)")
	snap, _ := db.Snapshot(ctx) // id and created_at have volatile defaults: left out
	fmt.Print(snap)

	// Reset brings back exactly the migrated state, on the same connection.
	_ = db.Reset(ctx)
	snap, _ = db.Snapshot(ctx, pgfixture.KeepVolatile(), pgfixture.IgnoreColumns("created_at"))
	fmt.Print(snap)
	// Output:
	// customers:
	//   (name='Ann')
	// rewards:
	//   (customer_id=1, reason='order_reward', points=50)
	// customers:
	//   (id=1, name='Ann')
	// rewards:
}

func ExampleDiff() {
	ctx := context.Background()
	srv, _ := pgfixture.Shared(ctx)
	db, err := srv.CreateDB(ctx, schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close(ctx, false)
	exec := func(sql string) { _, _ = db.Pool().Exec(ctx, sql) }

	// The expected outcome: one clean run of the job.
	exec("INSERT INTO rewards VALUES (1, 'order_reward', 50)")
	want, _ := db.Snapshot(ctx)

	// The job delivered twice.
	_ = db.Reset(ctx)
	exec("INSERT INTO rewards VALUES (1, 'order_reward', 50)")
	exec("INSERT INTO rewards VALUES (1, 'order_reward', 50)")
	exec("UPDATE customers SET name = 'Ann B.'")
	got, _ := db.Snapshot(ctx)

	fmt.Print(pgfixture.FormatDiff(pgfixture.Diff(want, got)))
	// Output:
	// customers:
	//   - (name='Ann')
	//   + (name='Ann B.')
	// rewards:
	//   + (customer_id=1, reason='order_reward', points=50)
}

func ExampleStartLocal() {
	// A server of the test's own, for behaviour that depends on a setting:
	// here a small max_connections.
	ctx := context.Background()
	srv, err := pgfixture.StartLocal(ctx, "max_connections=30")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	// pgfixture keeps within what the server allows it: 30, minus 3
	// reserved for superusers and 8 for its admin pool, leaves 19.
	_, err = srv.ReserveConnections(ctx, 20, "a load test")
	fmt.Println(errors.Is(err, pgfixture.ErrConnectionLimit))
	release, err := srv.ReserveConnections(ctx, 19, "a load test")
	fmt.Println(err)
	release()
	// Prints true, then <nil>. (Not run as a test: it needs PostgreSQL
	// binaries, which a machine with only Docker lacks;
	// TestConnectionLimitOnASmallServer runs the same.)
}

// Rows rewritten from a snapshot (here, a token replaced by a placeholder)
// compare as a snapshot again.
func ExampleNewSnapshot() {
	cols := []string{"email", "token"}
	want := pgfixture.NewSnapshot(map[string][]pgfixture.Row{"users": {{Columns: cols, Values: []string{"'ann@example.com'", "‹uuid 1›"}}}})
	got := pgfixture.NewSnapshot(map[string][]pgfixture.Row{"users": {
		{Columns: cols, Values: []string{"'ann@example.com'", "‹uuid 1›"}},
		{Columns: cols, Values: []string{"'ann@example.com'", "‹uuid 2›"}},
	}})
	fmt.Print(pgfixture.FormatDiff(pgfixture.Diff(want, got)))
	fmt.Printf("%q\n", got.ColumnType("users", "token")) // only Snapshot reads types
	// Output:
	// users:
	//   + (email='ann@example.com', token=‹uuid 2›)
	// ""
}
