package pgfixture

import (
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// openSQL returns a database/sql handle on url through pgx; it connects
// lazily.
func openSQL(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stdlib.GetConnector(*cfg)), nil
}

// mustParseConfig returns a configuration for a handle that is never
// opened.
func mustParseConfig() *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig("postgres://unused.invalid/unused?sslmode=disable")
	if err != nil {
		panic(err)
	}
	return cfg
}
