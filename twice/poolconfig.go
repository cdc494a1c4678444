package twice

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/handles"
)

// ConfigurePool gives the check the application's own pool configuration:
// configure is called on the config of every pool the check makes for the job
// (a.Pool, the concurrent scenarios' workers, the parallel lanes'), as the
// application calls it on its own before pgxpool.NewWithConfig. Whatever an
// application sets applies: AfterConnect (registering enum, composite or
// pgvector types; its statements are not points), RuntimeParams
// (search_path, timezone), DefaultQueryExecMode and the caches, a Tracer
// (called after the check's, so it sees every statement), BeforeAcquire,
// PrepareConn and AfterRelease (after the check's own). The check keeps what
// is its own: where the pool connects, its application_name, its bounds on
// connections. a.DB, pgx's database/sql driver, gets the same ConnConfig and
// AfterConnect.
func ConfigurePool(configure func(*pgxpool.Config)) Option {
	return optionFunc(func(c *config) { c.ConfigurePool = configure })
}

// typeHint is what a report adds to a clean run's error that says pgx does
// not know a type (internal/handles).
var typeHint = handles.TypeHint
