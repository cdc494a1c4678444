// Package dataaccess checks the same job, broken and fixed, written with
// the data-access libraries Go jobs are written with: GORM
// (gorm.io/gorm), sqlx (github.com/jmoiron/sqlx) and bun
// (github.com/uptrace/bun), each opened on the attempt's *sql.DB (a.DB).
//
// It is a module of its own, so that these libraries never enter
// twicekit's go.mod; .ci/run runs its tests. docs/queues.md's
// "Data-access libraries" table says what each needs.
package dataaccess
