// Package migrationtest holds the helpers of the migrator packages' tests.
package migrationtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// Columns lists every table of the public schema with its columns and
// types, in order: "customers(id bigint, email text)".
func Columns(t testing.TB, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT c.table_name || '(' || string_agg(c.column_name || ' ' || c.data_type, ', ' ORDER BY c.ordinal_position) || ')'
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
		GROUP BY c.table_name ORDER BY c.table_name`)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// Scalar runs a query that returns one value.
func Scalar[T any](t testing.TB, pool *pgxpool.Pool, sql string, args ...any) T {
	t.Helper()
	var v T
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&v))
	return v
}

// Tables prints the tables of the public schema, in name order.
func Tables(ctx context.Context, pool *pgxpool.Pool) string {
	var names string
	_ = pool.QueryRow(ctx, `SELECT string_agg(tablename, ' ' ORDER BY tablename)
		FROM pg_tables WHERE schemaname = 'public'`).Scan(&names)
	return names
}
