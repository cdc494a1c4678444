package twice_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite of data access (issue 30): what applications send,
// run once on a plain pool configured as an application configures it and
// once as the check's clean run, on the same schema. Rows, errors and
// results must be identical. The table of docs/dataaccess.md is written from
// what production's pool did.

var accessSchema = pgfixture.SQL(`
CREATE TYPE mood AS ENUM ('happy', 'sad');
CREATE TYPE amount AS (currency text, cents bigint);
CREATE DOMAIN positive AS int CHECK (VALUE > 0);
CREATE TABLE things (
  id    int PRIMARY KEY,
  tags  jsonb,
  attrs jsonb,
  doc   json,
  nums  bigint[],
  words text[],
  m     mood,
  moods mood[],
  total amount,
  qty   positive,
  price numeric(12,3),
  uid   uuid,
  at    timestamptz,
  day   date
);`)

// accessHandles are what a case uses: a pgx pool and a *sql.DB.
type accessHandles struct {
	pool *pgxpool.Pool
	db   *sql.DB
}

type accessCase struct {
	name string // what the application sends
	// pool is the application's pool configuration (nil: pgxpool's defaults).
	pool func(*pgxpool.Config)
	// libpq: the *sql.DB is lib/pq's (twice.SQLDriver("postgres")), not pgx's.
	libpq bool
	run   func(ctx context.Context, h accessHandles) (string, error)
}

// registerMoods is an application's AfterConnect registering an enum and its
// array, so that a []string binds to mood[].
func registerMoods(ctx context.Context, c *pgx.Conn) error {
	for _, name := range []string{"mood", "_mood"} {
		t, err := c.LoadType(ctx, name)
		if err != nil {
			return err
		}
		c.TypeMap().RegisterType(t)
	}
	return nil
}

func readOne(ctx context.Context, h accessHandles, cols string) (string, error) {
	var s string
	err := h.pool.QueryRow(ctx, `SELECT row(`+cols+`)::text FROM things ORDER BY id LIMIT 1`).Scan(&s)
	return s, err
}

func execThen(cols string, sql string, args ...any) func(ctx context.Context, h accessHandles) (string, error) {
	return func(ctx context.Context, h accessHandles) (string, error) {
		if _, err := h.pool.Exec(ctx, sql, args...); err != nil {
			return "", err
		}
		return readOne(ctx, h, cols)
	}
}

var accessCases = []accessCase{
	{name: "`[]string` and `map[string]any` to jsonb", run: execThen("tags, attrs",
		`INSERT INTO things (id, tags, attrs) VALUES (1, $1, $2)`, []string{"gold", "early"}, map[string]any{"plan": "pro", "seats": 3})},
	{name: "`map[string]any` to json", run: execThen("doc",
		`INSERT INTO things (id, doc) VALUES (1, $1)`, map[string]any{"a": []int{1, 2}})},
	{name: "a struct to jsonb, scanned back into a map", run: func(ctx context.Context, h accessHandles) (string, error) {
		type plan struct {
			Name  string `json:"name"`
			Seats int    `json:"seats"`
		}
		if _, err := h.pool.Exec(ctx, `INSERT INTO things (id, attrs) VALUES (1, $1)`, plan{"pro", 3}); err != nil {
			return "", err
		}
		var m map[string]any
		err := h.pool.QueryRow(ctx, `SELECT attrs FROM things WHERE id = 1`).Scan(&m)
		return fmt.Sprint(m), err
	}},
	{name: "`[]int64` and `[]string` to bigint[] and text[]", run: execThen("nums, words",
		`INSERT INTO things (id, nums, words) VALUES (1, $1, $2)`, []int64{3, 1, 2}, []string{"a", "b c"})},
	{name: "a string to an enum", run: execThen("m", `INSERT INTO things (id, m) VALUES (1, $1)`, "happy")},
	{name: "`[]string` to an enum array, its type registered in `AfterConnect`", pool: func(c *pgxpool.Config) { c.AfterConnect = registerMoods },
		run: execThen("moods", `INSERT INTO things (id, moods) VALUES (1, $1)`, []string{"happy", "sad"})},
	{name: "a composite registered in `AfterConnect`", pool: func(c *pgxpool.Config) { c.AfterConnect = registerAmount },
		run: func(ctx context.Context, h accessHandles) (string, error) {
			// (registerAmount loads "amount" only: the enum is not needed)
			if _, err := h.pool.Exec(ctx, `INSERT INTO things (id, total) VALUES (1, $1)`, pgtype.CompositeFields{"EUR", int64(1250)}); err != nil {
				return "", err
			}
			return readOne(ctx, h, "total")
		}},
	{name: "an int to a domain; a value the domain refuses", run: func(ctx context.Context, h accessHandles) (string, error) {
		if _, err := h.pool.Exec(ctx, `INSERT INTO things (id, qty) VALUES (1, $1)`, 4); err != nil {
			return "", err
		}
		_, err := h.pool.Exec(ctx, `INSERT INTO things (id, qty) VALUES (2, $1)`, -1)
		return "", err
	}},
	{name: "numeric from a string, uuid from a string, `time.Time` to timestamptz and date", run: execThen("price, uid, at, day",
		`INSERT INTO things (id, price, uid, at, day) VALUES (1, $1, $2, $3, $4)`, "12.345", "6f1c1a2e-58d4-4bd9-9d1c-4c2b5d5f0a11",
		time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))},
	{name: "`pgx.NamedArgs`", run: execThen("words",
		`INSERT INTO things (id, words) VALUES (@id, @words)`, pgx.NamedArgs{"id": 1, "words": []string{"x"}})},
	{name: "`CopyFrom`", run: func(ctx context.Context, h accessHandles) (string, error) {
		n, err := h.pool.CopyFrom(ctx, pgx.Identifier{"things"}, []string{"id", "tags"},
			pgx.CopyFromRows([][]any{{1, []string{"a"}}, {2, map[string]any{"b": true}}}))
		if err != nil {
			return "", err
		}
		return fmt.Sprint(n), nil
	}},
	{name: "`SendBatch`", run: func(ctx context.Context, h accessHandles) (string, error) {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO things (id, tags) VALUES (1, $1)`, []string{"a"})
		b.Queue(`INSERT INTO things (id, nums) VALUES (2, $1)`, []int64{7})
		b.Queue(`SELECT count(*) FROM things`)
		br := h.pool.SendBatch(ctx, b)
		defer func() { _ = br.Close() }()
		for range 2 {
			if _, err := br.Exec(); err != nil {
				return "", err
			}
		}
		var n int
		err := br.QueryRow().Scan(&n)
		return fmt.Sprint(n), err
	}},
	{name: "`pgx.CollectRows` with `RowToStructByName`", run: func(ctx context.Context, h accessHandles) (string, error) {
		if _, err := h.pool.Exec(ctx, `INSERT INTO things (id, words, price) VALUES (1, '{a}', 1.5), (2, '{b,c}', 2)`); err != nil {
			return "", err
		}
		type thing struct {
			ID    int
			Words []string
			Price pgtype.Numeric
		}
		rows, _ := h.pool.Query(ctx, `SELECT id, words, price FROM things ORDER BY id`)
		got, err := pgx.CollectRows(rows, pgx.RowToStructByName[thing])
		var out []string
		for _, x := range got {
			f, _ := x.Price.Float64Value()
			out = append(out, fmt.Sprintf("%d %v %v", x.ID, x.Words, f.Float64))
		}
		return strings.Join(out, "; "), err
	}},
	{name: "an explicit `Prepare`, then the statement by name", run: func(ctx context.Context, h accessHandles) (string, error) {
		c, err := h.pool.Acquire(ctx)
		if err != nil {
			return "", err
		}
		defer c.Release()
		if _, err := c.Conn().Prepare(ctx, "put", `INSERT INTO things (id, tags) VALUES ($1, $2)`); err != nil {
			return "", err
		}
		if _, err := c.Exec(ctx, "put", 1, []string{"p"}); err != nil {
			return "", err
		}
		return readOne(ctx, h, "tags")
	}},
	{name: "the simple protocol, chosen in the pool's config", pool: func(c *pgxpool.Config) {
		c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}, run: execThen("nums, price", `INSERT INTO things (id, nums, price) VALUES (1, $1, $2)`, []int64{1, 2}, "3.5")},
	{name: "a unique violation", run: func(ctx context.Context, h accessHandles) (string, error) {
		_, err := h.pool.Exec(ctx, `INSERT INTO things (id) VALUES (1), (1)`)
		return "", err
	}},
	{name: "`database/sql` through pgx's stdlib: `Exec`, `QueryRow`, `[]byte` to jsonb", run: func(ctx context.Context, h accessHandles) (string, error) {
		if _, err := h.db.ExecContext(ctx, `INSERT INTO things (id, attrs, price) VALUES ($1, $2, $3)`, 1, []byte(`{"k": 1}`), "9.99"); err != nil {
			return "", err
		}
		var attrs, price string
		err := h.db.QueryRowContext(ctx, `SELECT attrs::text, price::text FROM things WHERE id = 1`).Scan(&attrs, &price)
		return attrs + " " + price, err
	}},
	{name: "`database/sql` through lib/pq: `Exec`, a transaction, `QueryRow`", libpq: true, run: func(ctx context.Context, h accessHandles) (string, error) {
		tx, err := h.db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, `INSERT INTO things (id, words, at) VALUES ($1, $2, $3)`, 1, "{a,b}", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)); err != nil {
			return "", err
		}
		if err := tx.Commit(); err != nil {
			return "", err
		}
		var s string
		err = h.db.QueryRowContext(ctx, `SELECT words::text || ' ' || at::text FROM things WHERE id = 1`).Scan(&s)
		return s, err
	}},
}

// accessOutcome is what one side did: the result or the error, and the rows.
type accessOutcome struct{ result, rows string }

func outcomeOf(result string, err error, snap *pgfixture.Snapshot) accessOutcome {
	if err != nil {
		result = "error: " + err.Error()
	}
	return accessOutcome{result: result, rows: snap.String()}
}

// productionConfig is a default pgxpool's configuration for db: its pool
// settings as pgxpool.ParseConfig gives them, and db's connection settings
// with the password its URL masks (a server of container or DSN mode asks
// for it).
func productionConfig(t *testing.T, db *pgfixture.DB) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL())
	require.NoError(t, err)
	cfg.ConnConfig = db.ConnConfig()
	return cfg
}

// onProduction runs a case on a plain pgxpool configured as the
// application configures it (and a *sql.DB on the same settings).
func onProduction(t *testing.T, c accessCase) accessOutcome {
	ctx := context.Background()
	db := pgfixture.New(t, accessSchema)
	cfg := productionConfig(t, db)
	if c.pool != nil {
		c.pool(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	var sqlDB *sql.DB
	if c.libpq {
		cc := db.ConnConfig()
		sqlDB, err = sql.Open("postgres", fmt.Sprintf("host=%s port=%d user=%s password='%s' dbname=%s sslmode=disable",
			cc.Host, cc.Port, cc.User, strings.ReplaceAll(cc.Password, "'", `\'`), cc.Database))
		require.NoError(t, err)
	} else {
		var opts []stdlib.OptionOpenDB
		if cfg.AfterConnect != nil {
			opts = append(opts, stdlib.OptionAfterConnect(cfg.AfterConnect))
		}
		sqlDB = stdlib.OpenDB(*cfg.ConnConfig, opts...)
	}
	defer func() { _ = sqlDB.Close() }()
	result, runErr := c.run(ctx, accessHandles{pool: pool, db: sqlDB})
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	return outcomeOf(result, runErr, snap)
}

// inTheCheck runs a case as the check's clean run, on a.Pool and a.DB.
func inTheCheck(t *testing.T, c accessCase) accessOutcome {
	var mu sync.Mutex
	var result string
	var runErr error
	recorded := false
	job := twice.Job{Name: c.name, Schema: accessSchema, Run: func(ctx context.Context, a *twice.Attempt) error {
		r, err := c.run(ctx, accessHandles{pool: a.Pool, db: a.DB})
		mu.Lock()
		if !recorded { // the first clean run's
			result, runErr, recorded = r, err, true
		}
		mu.Unlock()
		return nil // the rows and the outcome are compared here, not the job's verdict
	}}
	opts := []twice.Option{twice.Only("sequential"), twice.WithoutConcurrency("the clean run is compared here")}
	if c.pool != nil {
		opts = append(opts, twice.ConfigurePool(c.pool))
	}
	if c.libpq {
		opts = append(opts, twice.SQLDriver("postgres"))
	}
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	require.NotNil(t, rep.Reference)
	mu.Lock()
	defer mu.Unlock()
	return outcomeOf(result, runErr, rep.Reference.Snapshot)
}

func TestDataAccessIsTheSameAsProductions(t *testing.T) {
	t.Parallel()
	got := make([]accessOutcome, len(accessCases))
	t.Run("cases", func(t *testing.T) {
		for i, c := range accessCases {
			t.Run(c.name, func(t *testing.T) { // not in parallel: a parallel subtest waits behind every parallel test of the package
				prod := onProduction(t, c)
				check := inTheCheck(t, c)
				require.Equal(t, prod.result, check.result, "the result or error differs")
				require.Equal(t, prod.rows, check.rows, "the rows differ")
				got[i] = prod
			})
		}
	})
	if t.Failed() || testing.Short() {
		return
	}
	for _, o := range got {
		if o == (accessOutcome{}) {
			return // a -run that picked some cases cannot judge the whole table
		}
	}
	docsblock.Check(t, "../docs/dataaccess.md", "twice:dataaccess", accessTable(got))
}

// accessTable is the table of docs/dataaccess.md: each case, what
// production's pool returned, and that the check's clean run did the same.
func accessTable(got []accessOutcome) string {
	var b strings.Builder
	b.WriteString("| the application sends | production's pool returns | the check's clean run |\n|---|---|---|\n")
	for i, c := range accessCases {
		r := got[i].result
		if r == "" {
			r = "(nothing)"
		}
		r = strings.ReplaceAll(r, "|", "\\|")
		fmt.Fprintf(&b, "| %s | `%s` | the same result, error and rows |\n", c.name, strings.ReplaceAll(r, "`", "'"))
	}
	return b.String()
}
