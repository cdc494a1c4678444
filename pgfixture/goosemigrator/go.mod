module github.com/twicekit/twicekit/pgfixture/goosemigrator

go 1.25.0

replace github.com/twicekit/twicekit => ../../

require (
	github.com/jackc/pgx/v5 v5.8.0
	github.com/pressly/goose/v3 v3.23.0
	github.com/stretchr/testify v1.11.1
	github.com/twicekit/twicekit v0.0.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/mfridman/interpolate v0.0.2 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/sethvargo/go-retry v0.3.0 // indirect
	go.uber.org/goleak v1.2.1 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/text v0.29.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
