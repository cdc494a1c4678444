module github.com/twicekit/twicekit

go 1.25.0

require (
	github.com/DATA-DOG/go-sqlmock v1.3.3
	github.com/jackc/pgx/v5 v5.8.0
	github.com/lib/pq v1.9.0
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.2.1
	pgregory.net/rapid v1.1.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/kr/text v0.1.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/rogpeppe/go-internal v1.6.1 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/text v0.29.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
