package pgfixture

import "fmt"

// MERGE: delete this file once Migrations exists; twiceriver then builds its
// schema as Migrations(River(), schema), which applies River's migrations
// with rivermigrate itself.

// WithRiver returns schema preceded by River's migrations, as SQL (River's
// up migrations of the main line, for the default schema).
func WithRiver(schema Schema) Schema {
	migs := make([]migration, 0, len(schema.migs)+8)
	for i, sql := range riverSQL() {
		migs = append(migs, migration{name: fmt.Sprintf("river migration %d", i+1), sql: sql})
	}
	migs = append(migs, schema.migs...)
	return newSchema(migs, schema.err)
}
