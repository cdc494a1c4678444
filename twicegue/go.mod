module github.com/twicekit/twicekit/twicegue

go 1.25.0

replace github.com/twicekit/twicekit => ../

require (
	github.com/jackc/pgx/v5 v5.8.0
	github.com/oklog/ulid/v2 v2.1.0
	github.com/twicekit/twicekit v0.0.0
	github.com/vgarvardt/gue/v5 v5.6.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/vgarvardt/backoff v1.0.0 // indirect
	go.opentelemetry.io/otel v1.21.0 // indirect
	go.opentelemetry.io/otel/metric v1.21.0 // indirect
	go.opentelemetry.io/otel/trace v1.21.0 // indirect
	go.uber.org/goleak v1.2.1 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/text v0.29.0 // indirect
	pgregory.net/rapid v1.1.0 // indirect
)
