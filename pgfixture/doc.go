// Package pgfixture provides a real PostgreSQL for tests: one server per test
// binary, databases cloned from per-schema templates, fast resets back to the
// migrated state, and snapshots of every row that compare as multisets.
//
// # Use
//
//	func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }
//
//	var schema = pgfixture.FS(os.DirFS("migrations")) // or pgfixture.SQL("CREATE TABLE ...", ...),
//	                                                  // goosemigrator.New(fsys), golangmigrator.New(fsys)
//
//	func TestJob(t *testing.T) {
//		t.Parallel()
//		db := pgfixture.New(t, schema)   // a fresh database in the migrated state
//		want, _ := db.Snapshot(ctx)
//		// ... run something against db.ConnConfig() or db.Pool() ...
//		_ = db.Reset(ctx)                  // back to the migrated state, ~ms, same connections
//		got, _ := db.Snapshot(ctx)
//		if d := pgfixture.Diff(want, got); d != nil {
//			t.Error(pgfixture.FormatDiff(d))
//		}
//	}
//
// # How PostgreSQL is found
//
// TWICE_POSTGRES=dsn|container|local forces a provider; otherwise the
// server of TWICE_DATABASE_URL when it is set, else the first that works of
// container and local:
//
//   - dsn: TWICE_DATABASE_URL, an existing server whose role may CREATE
//     DATABASE. pgfixture creates and drops only databases named twicekit_*,
//     never reads or changes others, and masks the password in everything it
//     prints. An unreachable server fails within 10 s, with an error that
//     names it: a URL that is set is never passed over for another provider.
//   - container: a PostgreSQL container (image from TWICE_POSTGRES_IMAGE)
//     through testcontainers-go's postgres module, on the engine
//     testcontainers-go finds (DOCKER_HOST, Docker contexts, Podman, Colima,
//     TLS, ~/.testcontainers.properties). An image that is missing is pulled
//     once; without a registry, build one with the command
//     pgfixture/cmd/twice-postgres-image. Ryuk runs where its image can be
//     had; elsewhere the container is labelled with its owning process and
//     the next start removes the containers of processes that died. The
//     container is removed when the Server closes.
//   - local: initdb and postgres from PATH or the highest version under
//     /usr/lib/postgresql/*/bin; a throwaway cluster in a temp directory
//     (twicekit-pg-*: under TMPDIR when it is set, else under /dev/shm when
//     that is a tmpfs with 2 GiB free, else under /tmp), listening on
//     127.0.0.1 and a socket in that directory, on a free port, with fsync
//     and synchronous commit off. Its URLs name the socket (the host
//     parameter), which costs less than loopback TCP. As root it runs
//     as the postgres (else nobody) user. The postmaster dies with the test
//     binary even without Main (parent-death signal), and leftover
//     directories of dead processes are removed on the next start. The
//     result of initdb is cached per PostgreSQL build and user under the
//     user's cache directory (~/.cache/twicekit/initdb; TWICE_INITDB_CACHE
//     names another directory, or "off"), so a binary's first check starts
//     its cluster by copying it (about 60 ms) instead of running initdb
//     (about 0.8 s).
//
// When none works, Shared returns one error listing each provider and why it
// failed, and how to provide one.
//
// # Schemas
//
// A [Schema] is a list of [Migrator]s: each has a hash of its migrations'
// content and applies them to a database given by URL. Built in:
//
//   - [SQL]: SQL text, each migration sent in one round trip; errors give
//     the line and column.
//   - [FS]: the *.sql files at the root of an fs.FS, in name order. Of
//     sql-migrate's files ("-- +migrate Up") and dbmate's ("--
//     migrate:up") it applies the up sections alone. It refuses a
//     directory that looks like goose's ("-- +goose Up"),
//     golang-migrate's (*.up.sql, *.down.sql) or tern's ("---- create
//     above / drop below ----"), whose down migrations it would run, with
//     an error that names the right migrator.
//
// Every clone of a template gets the settings the migrations made with
// ALTER DATABASE … SET (a search_path, for one), which CREATE DATABASE …
// TEMPLATE does not copy. SQL and FS skip a CREATE ROLE of a role the
// server already has: roles are the server's, and an earlier template
// build or test binary made it.
//
// Packages of their own add the migrators of three tools, so that only
// their users compile them (tern's is a module of its own):
//
//   - pgfixture/goosemigrator: goose (github.com/pressly/goose/v3) through
//     its Provider: the Up sections of the SQL files, and Go migrations
//     (passed, or in goose's global registry). Their code cannot be hashed,
//     only their versions and file names: bump the version to rebuild the
//     template.
//   - pgfixture/golangmigrator: golang-migrate
//     (github.com/golang-migrate/migrate/v4) through its iofs source and
//     pgx/v5 driver: the up migrations in version order.
//   - pgfixture/ternmigrator: tern (github.com/jackc/tern/v2) through its
//     migrate package: the create sections, templates evaluated.
//
// A migration's CREATE EXTENSION of an extension the server lacks fails
// with what to install: Debian's package in local mode, an image in
// container mode.
//
// [Migrations] chains migrators (a Schema among them contributes its own),
// e.g. a library's tables and then the app's goose migrations; a Schema is
// itself a Migrator ([Schema.Migrate] applies it anywhere). Any type with
// Hash and Migrate is a Migrator; it may open up to [ControlPoolConns]
// connections at a time and must close them before returning. A read error
// (a missing directory, a goose directory handed to FS) makes CreateDB fail
// before any database is created.
//
// # Databases
//
// Migrations are applied once per schema hash into a template database
// (twicekit_t_<hash>), built under an advisory lock so that test binaries
// sharing a server agree. Each fixture database (twicekit_f<n>_<random>) is
// a clone of it, commented with its creating process (host, boot id, pid), so
// that a later run drops the leftovers of dead processes. A failed test's
// database is kept and its masked URL logged (in local mode it goes with the
// cluster when the binary ends; use TWICE_DATABASE_URL to inspect it later);
// TWICE_KEEP_DB=1 keeps all.
//
// Reset restores the rows (including rows the migrations inserted) and the
// sequence values of every table in every non-system schema, in one
// transaction sent as one batch on the fixture's control pool. It re-clones
// only when the schema itself changed (tables, columns, constraints,
// defaults, triggers, indexes, sequences or enum values differ from the
// template's) or the reset cannot run.
//
// Checkpoint makes the database's present rows and sequence values the
// state Reset restores instead of the migrated state (a seeded state, say);
// UseCheckpoint gives another database of the schema the same one.
//
// Snapshot reads every schema but PostgreSQL's own unless Schemas narrows
// it; outside public it leaves out the tables an extension created.
// Snapshot prints values readably and deterministically: NULL as NULL,
// text quoted, booleans true/false, numeric exactly, timestamptz in RFC 3339
// UTC, jsonb canonically, arrays as {...}. By default it leaves out serial
// and identity columns and columns whose default calls now(),
// current_timestamp, clock_timestamp(), gen_random_uuid(), random() or
// uuid_generate_*().
//
// # Connections
//
// A Server measures, when it is made, the room the server leaves it:
// max_connections, minus superuser_reserved_connections (and PostgreSQL
// 16's reserved_connections), minus the client connections others hold at
// that moment, minus pgfixture's admin pool (8). Every fixture database
// holds 4 of it for its control pool while it lives ([ControlPoolConns]);
// callers reserve what they open themselves with [Server.CreateDBReserving]
// (a database and connections for it, in one step) or
// [Server.ReserveConnections]. [Server.TryCreateDBReserving] is
// CreateDBReserving that never waits, for a caller that already holds a
// reservation; [Server.ConnectionRoom] is the room. A reservation that fits the room but not
// what is free waits in line (first come, first served; warm idle
// databases are dropped for it first); one larger than the room measures
// again (others may have left) and then fails at once with the numbers and
// the max_connections to set ([ErrConnectionLimit]). A connection PostgreSQL refuses anyway (others
// connected since) fails with an error that says so ([ErrTooManyClients]).
//
// # Environment
//
// TWICE_POSTGRES, TWICE_DATABASE_URL and TWICE_POSTGRES_IMAGE choose the
// server, as above. DOCKER_HOST names the Docker engine of container mode.
// TWICE_KEEP_DB=1 keeps every test's database.
package pgfixture
