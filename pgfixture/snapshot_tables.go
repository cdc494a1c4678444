package pgfixture

import "strings"

// Tables adds tables to the snapshot whatever the schemas read: "table" is
// public's, "schema.table" another schema's. A queue adapter names the
// queue's own tables (river_job, gue_jobs) with it, so that Schemas("app")
// still reads them.
func Tables(names ...string) SnapshotOption {
	return optFunc(func(o *snapOpts) {
		for _, n := range names {
			o.tables = append(o.tables, qualified(n))
		}
	})
}

// ExcludeTables leaves tables out of the snapshot: "table" in every schema
// read, "schema.table" in that schema alone.
func ExcludeTables(names ...string) SnapshotOption {
	return optFunc(func(o *snapOpts) {
		if o.excludeTables == nil {
			o.excludeTables = map[string]bool{}
		}
		for _, n := range names {
			o.excludeTables[n] = true
		}
	})
}

// MigrationTables returns the names of the bookkeeping tables of the common
// migration tools (goose, golang-migrate, dbmate, Rails, tern, sql-migrate,
// Atlas, Flyway, Liquibase, sqlx, Diesel, knex, River's own): they record
// which migrations ran and when, never what a job did.
func MigrationTables() []string {
	return []string{
		"goose_db_version", "schema_migrations", "schema_version", "ar_internal_metadata",
		"gorp_migrations", "atlas_schema_revisions", "flyway_schema_history",
		"databasechangelog", "databasechangeloglock", "_sqlx_migrations",
		"__diesel_schema_migrations", "knex_migrations", "knex_migrations_lock", "river_migration",
	}
}

// qualified names a table as schema.table.
func qualified(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return "public." + name
}

// excludedTable reports whether the options leave table rel of schema nsp out.
func (o *snapOpts) excludedTable(nsp, rel string) bool {
	return o.excludeTables[rel] || o.excludeTables[nsp+"."+rel]
}
