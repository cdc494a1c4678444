package twice_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/generators"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/twice"
)

// The loyalty-points job over generated orders: a customer places an order
// and the job rewards it with one point per whole unit of the total, plus one.

// customer and order are the records the properties draw.
type customer struct {
	ID     int64
	Name   string
	Points int
}

type order struct {
	ID         int64
	CustomerID int64
	Total      generators.Money
}

// customers draws customers, shrinking toward {1, "Ann", 0}.
func customers() *rapid.Generator[customer] {
	return rapid.Custom(func(t *rapid.T) customer {
		return customer{
			ID:     generators.IDs().Draw(t, "customer id"),
			Name:   rapid.SampledFrom([]string{"Ann", "Léa Martin", "O'Brien"}).Draw(t, "name"),
			Points: rapid.IntRange(0, 100_000).Draw(t, "points"),
		}
	})
}

// ordersOf draws orders of c, shrinking toward {1, c.ID, EUR 0.01}.
func ordersOf(c customer) *rapid.Generator[order] {
	return rapid.Custom(func(t *rapid.T) order {
		return order{ID: generators.IDs().Draw(t, "order id"), CustomerID: c.ID, Total: generators.Amounts().Draw(t, "total")}
	})
}

type rewardFunc func(ctx context.Context, a *twice.Attempt, o order, points int) error

func rewardPoints(o order) int { return 1 + int(o.Total.Minor/100) }

func rewardJob(name string, c customer, o order, run rewardFunc) twice.Job {
	return twice.Job{
		Name:   name,
		Schema: loyaltySchema,
		Seed: func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO customers (id, name, points) VALUES ($1, $2, $3)`, c.ID, c.Name, c.Points)
			return err
		},
		Run: func(ctx context.Context, a *twice.Attempt) error { return run(ctx, a, o, rewardPoints(o)) },
	}
}

// The ledger row and the balance as two statements outside a transaction.
func rewardTwoStatements(ctx context.Context, a *twice.Attempt, o order, points int) error {
	tag, err := a.Pool.Exec(ctx, `INSERT INTO points_ledger (customer_id, order_id, reason, points)
VALUES ($1, $2, 'order_reward', $3) ON CONFLICT (order_id, reason) DO NOTHING`, o.CustomerID, o.ID, points)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = a.Pool.Exec(ctx, `UPDATE customers SET points = points + $2 WHERE id = $1`, o.CustomerID, points)
	return err
}

// The first document's fix: one statement, the ledger's unique constraint
// deciding.
func rewardCTE(ctx context.Context, a *twice.Attempt, o order, points int) error {
	_, err := a.Pool.Exec(ctx, `
WITH added AS (
  INSERT INTO points_ledger (customer_id, order_id, reason, points)
  VALUES ($1, $2, 'order_reward', $3)
  ON CONFLICT (order_id, reason) DO NOTHING
  RETURNING customer_id, points
)
UPDATE customers c SET points = c.points + added.points
FROM added WHERE c.id = added.customer_id`, o.CustomerID, o.ID, points)
	return err
}

// "add the points": not idempotent at all.
func rewardIncrement(ctx context.Context, a *twice.Attempt, o order, points int) error {
	_, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + $2 WHERE id = $1`, o.CustomerID, points)
	return err
}

// drawn is what the last run of a property drew.
type drawn struct {
	customer customer
	order    order
}

// loyaltyProperty draws a customer and an order and asserts that rewarding
// it is idempotent; the check draws its scenarios from the same rt.
func loyaltyProperty(name string, run rewardFunc, last *drawn) func(*rapid.T) {
	return func(rt *rapid.T) {
		c := customers().Draw(rt, "customer")
		o := ordersOf(c).Draw(rt, "order")
		if last != nil {
			*last = drawn{c, o}
		}
		twice.AssertIdempotent(rt, rewardJob(name, c, o, run))
	}
}

// rapidTB is a testing.TB that records what rapid reports instead of failing
// the test: Errorf and Fatalf apart, and the log. Methods it does not
// override go to the real test.
type rapidTB struct {
	testing.TB
	name   string
	errors []string
	fatals []string
	logs   []string
}

func newRapidTB(t *testing.T, name string) *rapidTB { return &rapidTB{TB: t, name: name} }

func (r *rapidTB) Helper()      {}
func (r *rapidTB) Name() string { return r.name }
func (r *rapidTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *rapidTB) Log(args ...any) { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *rapidTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *rapidTB) Error(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *rapidTB) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}
func (r *rapidTB) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }
func (r *rapidTB) Fail()             { r.errors = append(r.errors, "Fail()") }
func (r *rapidTB) FailNow()          { r.fatals = append(r.fatals, "FailNow()") }
func (r *rapidTB) Failed() bool      { return len(r.errors)+len(r.fatals) > 0 }

// text is everything rapid reported, in order of kind.
func (r *rapidTB) text() string {
	return "errors:\n" + strings.Join(r.errors, "\n") + "\nlogs:\n" + strings.Join(r.logs, "\n") + "\nfatals:\n" + strings.Join(r.fatals, "\n")
}

// setFlags sets flags for one test (not parallel: rapid reads them) and
// restores them when it ends.
func setFlags(t *testing.T, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		f := flag.Lookup(kv[i])
		if f == nil {
			t.Fatalf("no flag -%s", kv[i])
		}
		old := f.Value.String()
		if err := flag.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(kv[i], old) })
	}
}

// TestRapidShrinksOrderAndCrashPoint: the two-statement reward fails only
// when the attempt crashes between its statements; rapid shrinks the order
// to the smallest one and the schedule to that crash point.
func TestRapidShrinksOrderAndCrashPoint(t *testing.T) {
	longtest.Skip(t, "shrinking replays the check a hundred times or more")
	// quick: one drawn scenario per check, the cheapest to shrink.
	setFlags(t, "rapid.nofailfile", "true", "rapid.shrinktime", "4m", "rapid.seed", "20261012", "twice.budget", "quick")
	tb := newRapidTB(t, "TestRapidLoyalty")
	var last drawn
	rapid.Check(tb, func(rt *rapid.T) {
		c := customer{ID: generators.IDs().Draw(rt, "customer id"), Name: "Ann"}
		o := ordersOf(c).Draw(rt, "order")
		last = drawn{c, o}
		twice.AssertIdempotent(rt, rewardJob("reward, two statements", c, o, rewardTwoStatements))
	})
	if !tb.Failed() {
		t.Fatalf("the broken reward passed:\n%s", tb.text())
	}
	wantCustomer := customer{ID: 1, Name: "Ann"}
	wantOrder := order{ID: 1, CustomerID: 1, Total: generators.Money{Minor: 1, Currency: "EUR"}}
	if last.customer != wantCustomer || last.order != wantOrder {
		t.Errorf("shrunk to %+v, %+v; want %+v, %+v", last.customer, last.order, wantCustomer, wantOrder)
	}
	out := tb.text()
	for _, want := range []string{
		"twice: drew crash@2 of the ",
		"crash before point 2 of 2 (UPDATE customers SET points = points + $2 WHERE id = $1), then redelivery",
		"replay: go test ./twice -run '^TestRapidLoyalty$' -rapid.seed=N\n",
		"rapid drew scenario crash@2; add -twice.run=crash@2 to run only it on the same inputs.",
		"To reproduce, specify -run=\"TestRapidLoyalty\" -rapid.seed=",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-twice.run=crash@2\n") || strings.Contains(out, "kept the check's database") {
		t.Errorf("the failure contradicts rapid's replay or keeps a database:\n%s", out)
	}
	t.Logf("shrunk failure:\n%s", out)
}

// TestRapidFixedRewardPasses: the one-statement ledger passes every drawn
// order and scenario: 20 checks, rapid's default of 100 with the long
// tests.
func TestRapidFixedRewardPasses(t *testing.T) {
	if f := flag.Lookup("rapid.checks"); !longtest.Enabled() && f != nil && f.Value.String() == f.DefValue {
		setFlags(t, "rapid.checks", "20") // a -rapid.checks of the command line stands
	}
	rapid.Check(t, loyaltyProperty("reward, ledger CTE", rewardCTE, nil))
}

// TestRapidFailureTextIsDeterministic runs a failing property from the same
// seed twice: every line rapid and twice print is the same.
func TestRapidFailureTextIsDeterministic(t *testing.T) {
	setFlags(t, "rapid.nofailfile", "true", "rapid.shrinktime", "1ms", "rapid.seed", "381", "twice.budget", "default")
	run := func() string {
		tb := newRapidTB(t, "TestRapidIncrement")
		rapid.Check(tb, loyaltyProperty("reward, increment", rewardIncrement, nil))
		if !tb.Failed() {
			t.Fatalf("the increment passed:\n%s", tb.text())
		}
		return tb.text()
	}
	first, second := run(), run()
	if first != second {
		t.Fatalf("the same seed printed two failures:\n--- first\n%s\n--- second\n%s", first, second)
	}
	// rapid prints the drawn records as twice_test.customer{...}: that
	// package name is the same every run.
	stable := strings.ReplaceAll(first, "twice_test.", "")
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`twice_[a-z0-9_]+`), regexp.MustCompile(`\bpid\b|PID`), regexp.MustCompile(`\d+(\.\d+)?(ms|µs|s)\b`)} {
		if m := bad.FindString(stable); m != "" {
			t.Errorf("the failure text holds %q, which changes between runs:\n%s", m, first)
		}
	}
}

// TestRapidFailFileReplaysInAnotherProcess: a failing run saves a fail file;
// a second go test process, with no seed, replays the same failure from it.
func TestRapidFailFileReplaysInAnotherProcess(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("already the child")
	}
	longtest.Skip(t, "starts two test processes, each with its own PostgreSQL")
	dir := t.TempDir()
	child := func(args ...string) string {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestRapidFailFileChild$", "-test.v", "-twice.budget=default"}, args...)...)
		cmd.Dir = dir // fail files go to dir/testdata/rapid, not the repository
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the child passed:\n%s", out)
		}
		return string(out)
	}
	first := child("-rapid.seed=7", "-rapid.shrinktime=5s")
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "rapid", "TestRapidFailFileChild", "*.fail"))
	if len(files) != 1 {
		t.Fatalf("want one fail file, got %v; output:\n%s", files, first)
	}
	second := child()
	if !strings.Contains(second, "[rapid] failed after 0 tests") {
		t.Errorf("the second process did not replay the fail file first:\n%s", second)
	}
	// Under load the first process's shrinking may stop at its 5 s limit,
	// and then its last failure says so; the replay shrinks nothing.
	r1, r2 := withoutShrinkLimit(twiceReport(first)), twiceReport(second)
	if r1 == "" || r1 != r2 {
		t.Fatalf("the replay differs:\n--- first process\n%s\n--- second process\n%s", r1, r2)
	}
	t.Logf("replayed from %s:\n%s", filepath.Base(files[0]), r2)
}

const childEnv = "TWICE_RAPID_TEST_CHILD"

// TestRapidFailFileChild is the failing property the test above runs in
// child processes.
func TestRapidFailFileChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestRapidFailFileReplaysInAnotherProcess")
	}
	rapid.Check(t, loyaltyProperty("reward, two statements", rewardTwoStatements, nil))
}

// twiceReport is the last twice failure in a test's output, without the file
// and line prefixes of t.Log.
var logPrefix = regexp.MustCompile(`^\s*rapid_test\.go:\d+: `)

func twiceReport(out string) string {
	lines := strings.Split(out, "\n")
	start := -1
	for i, l := range lines {
		if strings.Contains(l, "twice: reward, two statements: ") {
			start = i
		}
	}
	if start < 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range lines[start:] {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") {
			break
		}
		b.WriteString(strings.TrimSpace(logPrefix.ReplaceAllString(l, "")) + "\n")
	}
	return b.String()
}

// FuzzRapidLoyalty fuzzes the order with go test -fuzz through
// rapid.MakeFuzz: the fuzzer's bytes become rapid's draws (the order and the
// scenarios). Without -fuzz, go test runs the seed corpus below.
//
//	go test ./twice -run '^$' -fuzz '^FuzzRapidLoyalty$' -fuzztime 1m
func FuzzRapidLoyalty(f *testing.F) {
	f.Add(make([]byte, 512)) // all zeros: every draw at its shrink target
	f.Add([]byte("order 9812, customer 77, 50 points; order 9812, customer 77, 50 points; order 9812, customer 77"))
	f.Fuzz(rapid.MakeFuzz(loyaltyProperty("reward, ledger CTE", rewardCTE, nil)))
}

// BenchmarkRapidLoyalty measures rapid checks of the loyalty property per
// second under the default budget (a draw of up to 3 scenarios per check).
func BenchmarkRapidLoyalty(b *testing.B) {
	f := flag.Lookup("rapid.checks")
	old := f.Value.String()
	_ = flag.Set("rapid.checks", "10")
	defer func() { _ = flag.Set("rapid.checks", old) }()
	checks := 0
	prop := loyaltyProperty("reward, ledger CTE", rewardCTE, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rapid.Check(b, func(rt *rapid.T) { checks++; prop(rt) })
	}
	b.ReportMetric(float64(checks)/b.Elapsed().Seconds(), "checks/s")
}

// rapidShrinkNote is what the failure rapid prints last says when rapid's
// shrinking ran to -rapid.shrinktime.
const rapidShrinkNote = "twice: rapid stopped shrinking at its time limit (-rapid.shrinktime): this case may not be the smallest that fails; " +
	"run again with a larger -rapid.shrinktime (for example -rapid.shrinktime=10m) to shrink it further"

// lastLog is the last line group rapid logged: its replay of the shrunk
// case's failure.
func (r *rapidTB) lastLog() string {
	if len(r.logs) == 0 {
		return ""
	}
	return r.logs[len(r.logs)-1]
}

// TestRapidSaysWhenShrinkingStoppedAtItsTimeLimit: rapid ends its
// shrinking at -rapid.shrinktime without a word; the failure it prints last
// says so, and a failure shrunk within the limit does not (issue 43).
func TestRapidSaysWhenShrinkingStoppedAtItsTimeLimit(t *testing.T) {
	t.Run("stopped at the limit", func(t *testing.T) {
		setFlags(t, "rapid.nofailfile", "true", "rapid.shrinktime", "1ms", "rapid.seed", "381", "twice.budget", "default")
		tb := newRapidTB(t, "TestRapidIncrement")
		rapid.Check(tb, loyaltyProperty("reward, increment", rewardIncrement, nil))
		if !strings.HasSuffix(tb.lastLog(), "\n"+rapidShrinkNote) {
			t.Fatalf("the last failure does not end with %q:\n%s", rapidShrinkNote, tb.text())
		}
		if strings.Count(tb.text(), rapidShrinkNote) != 1 {
			t.Errorf("the note is not said once:\n%s", tb.text())
		}
	})
	t.Run("shrunk within the limit", func(t *testing.T) {
		setFlags(t, "rapid.nofailfile", "true", "rapid.shrinktime", "10m", "rapid.seed", "381", "twice.budget", "quick")
		tb := newRapidTB(t, "TestRapidOverlap")
		rapid.Check(tb, func(rt *rapid.T) {
			twice.AssertIdempotent(rt, ledgerNoUniqueJob("ledger: check, then act", checkThenAct))
		})
		if !tb.Failed() || strings.Contains(tb.text(), "shrinktime") {
			t.Fatalf("want a failure without the note:\n%s", tb.text())
		}
	})
}

// TestRapidNamesTheScenarioItsLogNames: the overlaps run in every drawn
// case; a failure in one says that the check ran it besides rapid's draw,
// which the log names, not that rapid drew it (issue 43).
func TestRapidNamesTheScenarioItsLogNames(t *testing.T) {
	setFlags(t, "rapid.nofailfile", "true", "rapid.shrinktime", "10m", "rapid.seed", "381", "twice.budget", "quick")
	tb := newRapidTB(t, "TestRapidOverlap")
	rapid.Check(tb, func(rt *rapid.T) {
		twice.AssertIdempotent(rt, ledgerNoUniqueJob("ledger: check, then act", checkThenAct))
	})
	out := tb.text()
	for _, want := range []string{
		"\ntwice: drew sequential of the 8 planned scenarios (the overlaps run besides them)\n",
		"\n  the check ran scenario overlap@2 besides the scenarios rapid drew (every drawn case runs the overlaps); add -twice.run=overlap@2 to run only it on the same inputs.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rapid drew scenario overlap@2") {
		t.Errorf("the failure says rapid drew a scenario it did not:\n%s", out)
	}
}

// withoutShrinkLimit drops the line that says rapid's shrinking stopped at
// -rapid.shrinktime: it depends on the machine's speed.
func withoutShrinkLimit(report string) string {
	var keep []string
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "twice: rapid stopped shrinking at its time limit") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
