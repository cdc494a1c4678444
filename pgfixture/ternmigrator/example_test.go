package ternmigrator_test

import (
	"os"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/pgfixture/ternmigrator"
)

// A schema of an app's tern migrations, then River's or a seed's SQL: the
// migrators compose.
func ExampleNew() {
	schema := pgfixture.Migrations(
		ternmigrator.New(os.DirFS("testdata/tern")),
		pgfixture.SQL(`INSERT INTO customers (id, email) VALUES (1, 'ann@example.com')`),
	)
	_ = schema // pgfixture.New(t, schema) in a test
	// Output:
}
