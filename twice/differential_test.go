package twice_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// shape is one way of writing a job that two deliveries may run at once.
// Its statements sleep a little inside PostgreSQL (pg_sleep in the
// statement), which makes overlaps likely in real parallel runs; the sleep
// decides nothing, PostgreSQL's snapshots and locks do.
type shape struct {
	name   string
	schema string
	seed   string
	run    func(ctx context.Context, a *twice.Attempt) error
}

// nap is the pause inside a statement that makes real deliveries overlap;
// it stands where PostgreSQL evaluates it once (a WHERE without FROM, or on
// the one row a statement reads).
const nap = `pg_sleep(0.02) IS NOT NULL`

func autocommit(sqls ...string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		for _, s := range sqls {
			if _, err := a.Pool.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// inTx runs the statements in one transaction opened with begin, and runs
// the whole transaction again on a serialization failure (40001), as a job
// written for REPEATABLE READ or SERIALIZABLE does.
func inTx(begin string, sqls ...string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		for try := 0; ; try++ {
			err := func() error {
				tx, err := a.Pool.BeginTx(ctx, pgx.TxOptions{})
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback(ctx) }()
				if begin != "" {
					if _, err := tx.Exec(ctx, begin); err != nil {
						return err
					}
				}
				for _, s := range sqls {
					if _, err := tx.Exec(ctx, s); err != nil {
						return err
					}
				}
				return tx.Commit(ctx)
			}()
			if sqlState(err) != "40001" || try == 3 {
				return err
			}
		}
	}
}

const (
	redeemNoKey  = `CREATE TABLE redemptions (coupon text NOT NULL, account bigint NOT NULL);`
	redeemKey    = `CREATE TABLE redemptions (coupon text PRIMARY KEY, account bigint NOT NULL);`
	totalsSchema = `CREATE TABLE items (id int PRIMARY KEY, amount int NOT NULL);
CREATE TABLE totals (id int NOT NULL, total int NOT NULL);`
	totalsSeed   = `INSERT INTO items VALUES (1, 5), (2, 7); INSERT INTO totals VALUES (1, 0);`
	ledgerSchema = `CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL);
CREATE TABLE ledger (order_id int NOT NULL, amount int NOT NULL);`
	ledgerSeed  = `INSERT INTO accounts VALUES (1, 0);`
	tasksSchema = `CREATE TABLE tasks (id int PRIMARY KEY, state text NOT NULL, runs int NOT NULL);`
	tasksSeed   = `INSERT INTO tasks VALUES (1, 'pending', 0);`
	counterSch  = `CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL);`
)

// The statements of the shapes.
const (
	insertIfAbsent = `INSERT INTO redemptions (coupon, account) SELECT 'SPRING', 7 WHERE ` + nap + ` AND NOT EXISTS (SELECT 1 FROM redemptions WHERE coupon = 'SPRING')`
	cteIfAbsent    = `WITH seen AS (SELECT count(*) AS n FROM redemptions WHERE coupon = 'SPRING')
INSERT INTO redemptions (coupon, account) SELECT 'SPRING', 7 FROM seen WHERE seen.n = 0 AND ` + nap
	capacityOne   = `INSERT INTO redemptions (coupon, account) SELECT 'SPRING', 7 WHERE ` + nap + ` AND (SELECT count(*) FROM redemptions) < 1`
	deleteTotal   = `DELETE FROM totals WHERE id = 1 AND ` + nap
	insertTotal   = `INSERT INTO totals (id, total) SELECT 1, sum(amount) FROM items`
	ledgerExists  = `SELECT 1 WHERE ` + nap + ` AND EXISTS (SELECT 1 FROM ledger WHERE order_id = 9)`
	creditOnce    = `UPDATE accounts SET balance = balance + 10 WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM ledger WHERE order_id = 9)`
	ledgerOnce    = `INSERT INTO ledger (order_id, amount) SELECT 9, 10 WHERE ` + nap + ` AND NOT EXISTS (SELECT 1 FROM ledger WHERE order_id = 9)`
	onConflictNot = `INSERT INTO redemptions (coupon, account) SELECT 'SPRING', 7 WHERE ` + nap + ` ON CONFLICT (coupon) DO NOTHING`
	onConflictUpd = `INSERT INTO counters (id, n) SELECT 1, 1 WHERE ` + nap + ` ON CONFLICT (id) DO UPDATE SET n = counters.n + 1`
)

// checkThenInsert is check, then act, in a transaction: the job reads
// whether the redemption exists and inserts it when it does not.
func checkThenInsert(begin string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		for try := 0; ; try++ {
			err := pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
				if begin != "" {
					if _, err := tx.Exec(ctx, begin); err != nil {
						return err
					}
				}
				var n int
				if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM redemptions WHERE coupon = 'SPRING') WHERE `+nap).Scan(&n); err != nil || n > 0 {
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO redemptions (coupon, account) VALUES ('SPRING', 7)`)
				return err
			})
			if sqlState(err) != "40001" || try == 3 {
				return err
			}
		}
	}
}

// claim takes the pending task with SKIP LOCKED and marks it done.
func claim(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		var id int
		err := tx.QueryRow(ctx, `SELECT id FROM tasks WHERE state = 'pending' AND `+nap+` ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE tasks SET state = 'done', runs = runs + 1 WHERE id = $1`, id)
		return err
	})
}

// forUpdate locks the account, then checks the ledger and acts.
func forUpdate(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT balance FROM accounts WHERE id = 1 AND `+nap+` FOR UPDATE`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, creditOnce); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, ledgerOnce)
		return err
	})
}

func shapes() []shape {
	return []shape{
		{"one statement: INSERT … WHERE NOT EXISTS, no unique key", redeemNoKey, "", autocommit(insertIfAbsent)},
		{"one statement: data-modifying CTE, no unique key", redeemNoKey, "", autocommit(cteIfAbsent)},
		{"one statement: capacity count", redeemNoKey, "", autocommit(capacityOne)},
		{"DELETE, then INSERT the recomputed total, autocommit", totalsSchema, totalsSeed, autocommit(deleteTotal, insertTotal)},
		{"DELETE, then INSERT the recomputed total, in a transaction", totalsSchema, totalsSeed, inTx("", deleteTotal, insertTotal)},
		{"SELECT … FOR UPDATE, then check and act", ledgerSchema, ledgerSeed, forUpdate},
		{"check, then act, unlocked (READ COMMITTED)", ledgerSchema, ledgerSeed, inTx("", ledgerExists, creditOnce, ledgerOnce)},
		{"FOR UPDATE SKIP LOCKED claim", tasksSchema, tasksSeed, claim},
		{"advisory lock, then check and act", redeemNoKey, "", checkThenInsertLocked},
		{"ON CONFLICT DO NOTHING", redeemKey, "", autocommit(onConflictNot)},
		{"ON CONFLICT DO UPDATE (an increment)", counterSch, "", autocommit(onConflictUpd)},
		{"check, then act, REPEATABLE READ with retries", redeemNoKey, "", checkThenInsert("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")},
		{"check, then act, SERIALIZABLE with retries", redeemNoKey, "", checkThenInsert("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")},
	}
}

// checkThenInsertLocked takes a transaction-level advisory lock first.
func checkThenInsertLocked(ctx context.Context, a *twice.Attempt) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(42)`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM redemptions WHERE coupon = 'SPRING') WHERE `+nap).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO redemptions (coupon, account) VALUES ('SPRING', 7)`)
		return err
	})
}

func (s shape) job() twice.Job {
	j := twice.Job{Name: s.name, Schema: pgfixture.SQL(s.schema), Run: s.run}
	if s.seed != "" {
		j.Seed = twice.SeedSQL(s.seed)
	}
	return j
}

// differential is what real parallelism and the check reached for a shape:
// the final states, those the check flagged, and one clean run's.
type differential struct {
	real, check map[string]bool
	flagged     map[string]bool
	clean       string
}

// realStates runs two deliveries of s truly in parallel, runs times
// released together and runs times with the second delivery released a
// little later, then redelivers, one after the other, those that returned
// an error (as the queue does), and returns the distinct final states.
func realStates(t *testing.T, s shape, runs int) map[string]bool {
	t.Helper()
	ctx := t.Context()
	db := pgfixture.New(t, pgfixture.SQL(s.schema))
	var pools [2]*pgxpool.Pool
	for i := range pools {
		cfg, err := pgxpool.ParseConfig("")
		require.NoError(t, err)
		cfg.ConnConfig = db.ConnConfig()
		cfg.MaxConns = 2
		p, err := pgxpool.NewWithConfig(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(p.Close)
		pools[i] = p
	}
	tables := `redemptions, items, totals, accounts, ledger, tasks, counters`
	states := map[string]bool{}
	for run := range 2 * runs {
		var existing []string
		for _, tb := range strings.Split(tables, ", ") {
			var ok bool
			require.NoError(t, db.Pool().QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, tb).Scan(&ok))
			if ok {
				existing = append(existing, tb)
			}
		}
		_, err := db.Pool().Exec(ctx, `TRUNCATE `+strings.Join(existing, ", ")+`; `+s.seed)
		require.NoError(t, err)
		// The second delivery is released with the first, or up to 100ms
		// later: the stagger walks through the first delivery's statements
		// and past its end; in the last run it starts when the first one
		// returned.
		stagger := time.Duration(0)
		if run >= runs {
			stagger = time.Duration(run-runs+1) * 100 * time.Millisecond / time.Duration(runs)
		}
		start, firstDone := make(chan struct{}), make(chan struct{})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range pools {
			wg.Go(func() {
				<-start
				if i == 1 {
					time.Sleep(stagger)
					if run == 2*runs-1 {
						<-firstDone
					}
				}
				errs[i] = s.run(ctx, &twice.Attempt{Pool: pools[i]})
				if i == 0 {
					close(firstDone)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			for try := 0; err != nil && try < 3; try++ {
				err = s.run(ctx, &twice.Attempt{Pool: pools[i]})
			}
			require.NoError(t, err, "the redeliveries of a real run failed")
		}
		snap, err := db.Snapshot(ctx)
		require.NoError(t, err)
		states[snap.String()] = true
	}
	return states
}

// checkStates runs the check's concurrent scenarios on s, every
// interleaving the thorough budget holds, and returns the distinct final
// states. The wall budget is off: what the check reaches must not depend on
// the machine's speed.
func checkStates(t *testing.T, s shape) (states, flagged map[string]bool, clean string) {
	t.Helper()
	return statesOf(t, checkReport(t.Context(), s))
}

// checkReport is the check checkStates reads.
func checkReport(ctx context.Context, s shape) *twice.Report {
	return twice.Check(ctx, s.job(), twice.ExploreAllInterleavings(), twice.WithBudget(twice.ThoroughBudget), twice.WallBudget(0))
}

// statesOf reads checkStates' answer from the check's report.
func statesOf(t *testing.T, rep *twice.Report) (states, flagged map[string]bool, clean string) {
	t.Helper()
	require.NoError(t, rep.Err)
	found := map[string]bool{}
	for _, f := range rep.Findings {
		found[f.Token] = true
	}
	states, flagged = map[string]bool{}, map[string]bool{}
	for _, sr := range rep.Scenarios {
		if tok := sr.Scenario.Token(); isConcurrent(tok) && sr.Snapshot != nil {
			states[sr.Snapshot.String()] = true
			if found[tok] {
				flagged[sr.Snapshot.String()] = true
			}
		}
	}
	require.NotEmpty(t, states, "the check played no concurrent scenario: %s", rep.String())
	require.NotNil(t, rep.Reference.Snapshot)
	return states, flagged, rep.Reference.Snapshot.String()
}

// compareStates says what real parallelism reached that the check did not
// (or did not flag, when it differs from the clean run's), and what the
// check reached that real parallelism did not.
func compareStates(d differential) (missed, unreal []string) {
	for s := range d.real {
		if !d.check[s] || (s != d.clean && !d.flagged[s]) {
			missed = append(missed, s)
		}
	}
	for s := range d.check {
		if !d.real[s] {
			unreal = append(unreal, s)
		}
	}
	slices.Sort(missed)
	slices.Sort(unreal)
	return missed, unreal
}

// stateWords prints a final state on one line for the docs table.
func stateWords(state string) string {
	var parts []string
	table := ""
	counts := map[string]int{}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(state), "\n") {
		if !strings.HasPrefix(line, "  ") {
			table = strings.TrimSuffix(line, ":")
			counts[table] += 0
			continue
		}
		counts[table]++
		if table == "accounts" || table == "tasks" || table == "counters" {
			rows = append(rows, table+" "+strings.TrimSpace(line))
		}
	}
	for _, tb := range slices.Sorted(maps.Keys(counts)) {
		if tb == "items" || tb == "accounts" || tb == "tasks" || tb == "counters" {
			continue
		}
		row := "rows"
		if counts[tb] == 1 {
			row = "row"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", tb, counts[tb], row))
	}
	parts = append(parts, rows...)
	return strings.Join(parts, ", ")
}

// stateList prints the states on one line; a state in flagged is marked.
func stateList(states map[string]bool, flagged ...map[string]bool) string {
	var ws []string
	for s := range states {
		w := stateWords(s)
		if len(flagged) > 0 && flagged[0][s] {
			w += " (flagged)"
		}
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return strings.Join(ws, "; ")
}

// runsPerShape is how many real parallel runs each shape gets, released
// together and as many staggered.
func runsPerShape() int {
	if longtest.Enabled() {
		return 100
	}
	return 8
}

// shapeRow compares the final states real parallel runs of s reach with
// those the check reaches, reports each one only one side reaches, and
// returns s's row of docs/concurrency.md's table.
func shapeRow(t *testing.T, s shape) string {
	// The check runs while the real runs do: theirs are mostly pg_sleep,
	// its is work.
	var rep *twice.Report
	var check sync.WaitGroup
	ctx, cancel := context.WithCancel(t.Context())
	check.Go(func() { rep = checkReport(ctx, s) })
	defer check.Wait()
	defer cancel() // a real run that failed ends the check first
	d := differential{real: realStates(t, s, runsPerShape())}
	check.Wait()
	d.check, d.flagged, d.clean = statesOf(t, rep)
	missed, unreal := compareStates(d)
	for _, m := range missed {
		t.Errorf("real parallel runs reached a final state the check does not reach, or does not flag though it differs from one clean run's:\n%s", m)
	}
	for _, u := range unreal {
		t.Errorf("the check reached a final state no real parallel run did:\n%s", u)
	}
	return fmt.Sprintf("| %s | %s | %s |\n", s.name, stateList(d.real), stateList(d.check, d.flagged))
}

// shapesAtOnce is how many shapes TestDifferentialAgainstRealParallelism
// runs at once (each a database for its real runs and one for its check).
const shapesAtOnce = 4

// The differential suite: for every shape, every final state two real
// parallel deliveries reach on PostgreSQL must be one the check's
// exploration reaches, and every state the check reaches must be one real
// runs reach. The table in docs/concurrency.md is this test's.
func TestDifferentialAgainstRealParallelism(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := map[string]string{}
	// The shapes run shapesAtOnce at a time, each subtest on a goroutine
	// of its own, not as parallel subtests: those wait behind every
	// parallel test of the package that asked before them (the testing
	// package releases them in turn), and the shapes, mostly real runs
	// waiting in pg_sleep, were then the suite's last minute.
	t.Run("shape", func(t *testing.T) {
		var shapesRun sync.WaitGroup
		slots := make(chan struct{}, shapesAtOnce)
		for _, s := range shapes() {
			shapesRun.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				t.Run(s.name, func(t *testing.T) {
					row := shapeRow(t, s)
					mu.Lock()
					rows[s.name] = row
					mu.Unlock()
				})
			})
		}
		shapesRun.Wait()
	})
	if t.Failed() || len(rows) != len(shapes()) {
		return
	}
	var b strings.Builder
	b.WriteString("| job shape (two deliveries at once) | PostgreSQL reaches | the check reaches |\n|---|---|---|\n")
	for _, s := range shapes() {
		b.WriteString(rows[s.name])
	}
	docsblock.Check(t, "../docs/concurrency.md", "differential", b.String())
}

// Without playing autocommit statements as implicit transactions, a
// statement is an instant to the check, and the one-statement
// check-then-act reaches a state on PostgreSQL (two redemptions) that the
// check never does: the suite fails.
func TestDifferentialFailsWithoutImplicitTransactions(t *testing.T) {
	s := shapes()[0]
	real := realStates(t, s, runsPerShape())
	restore := twice.PlayImplicitTransactions(false)
	check, flagged, clean := checkStates(t, s)
	restore()
	missed, _ := compareStates(differential{real: real, check: check, flagged: flagged, clean: clean})
	require.NotEmpty(t, missed, "real runs: %s; the check: %s", stateList(real), stateList(check))
	require.Contains(t, stateList(real), "redemptions: 2 rows")
	require.NotContains(t, stateList(check), "redemptions: 2 rows")
}
