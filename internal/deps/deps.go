//go:build tools

// Package deps pins the module's dependencies before every package imports
// them, so that `go mod tidy` keeps go.mod stable while the tree grows.
package deps

import (
	_ "github.com/DATA-DOG/go-sqlmock"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/lib/pq"
	_ "github.com/stretchr/testify/require"
	_ "github.com/testcontainers/testcontainers-go"
	_ "github.com/testcontainers/testcontainers-go/modules/postgres"
	_ "go.uber.org/goleak"
	_ "pgregory.net/rapid"
)
