package twice_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Jobs that write values no two clean runs share: now(), gen_random_uuid(),
// time.Now() and random uuids made in Go.

var varyingSchema = pgfixture.SQL(`
CREATE TABLE orders (
  id         bigint PRIMARY KEY,
  status     text   NOT NULL,
  shipped_at timestamptz,
  ship_count int    NOT NULL DEFAULT 0
);
CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL UNIQUE, token uuid NOT NULL);
CREATE TABLE sessions (id bigserial PRIMARY KEY, email text NOT NULL UNIQUE, token uuid NOT NULL);
CREATE TABLE signups (id bigserial PRIMARY KEY, email text NOT NULL, token uuid NOT NULL);
CREATE TABLE events (name text PRIMARY KEY, at timestamptz NOT NULL, ref text NOT NULL);
CREATE TABLE event_log (id bigserial PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL, ref text NOT NULL);`)

var varyingSeed = twice.SeedSQL(`INSERT INTO orders (id, status, shipped_at, ship_count) VALUES
  (11, 'paid', NULL, 0), (10, 'shipped', '2026-10-01 08:00:00+00', 1)`)

func varyingJob(name string, sql ...string) twice.Job {
	return twice.Job{Name: name, Schema: varyingSchema, Seed: varyingSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
			for _, q := range sql {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
	}}
}

const (
	shipGuardedSQL   = `UPDATE orders SET status = 'shipped', shipped_at = now() WHERE id = 11 AND shipped_at IS NULL`
	shipUnguardedSQL = `UPDATE orders SET status = 'shipped', shipped_at = now(), ship_count = ship_count + 1 WHERE id = 11`
	signupKeySQL     = `INSERT INTO users (email, token) VALUES ('ann@example.com', gen_random_uuid()) ON CONFLICT (email) DO NOTHING`
	signupNoKeySQL   = `INSERT INTO signups (email, token) VALUES ('ann@example.com', gen_random_uuid())`
	// One uuid for a user and its session, made once.
	userAndSessionSQL = `
WITH tok AS (SELECT gen_random_uuid() AS t),
u AS (INSERT INTO users (email, token) SELECT 'ann@example.com', t FROM tok ON CONFLICT (email) DO NOTHING RETURNING email, token)
INSERT INTO sessions (email, token) SELECT email, token FROM u`
	// Two users and their sessions; on a redelivery the session upsert's
	// update joins the wrong user: the sessions swap their tokens.
	swapUsersSQL = `INSERT INTO users (email, token) VALUES ('ann@example.com', gen_random_uuid()), ('bob@example.com', gen_random_uuid())
  ON CONFLICT (email) DO NOTHING`
	swapSessionsSQL = `INSERT INTO sessions (email, token) SELECT email, token FROM users
ON CONFLICT (email) DO UPDATE SET token = (SELECT token FROM users u WHERE u.email <> EXCLUDED.email)`
)

// rawTime and rawUUID find a printed wall-clock time or uuid.
var (
	rawTime = regexp.MustCompile(`20\d\d-\d\d-\d\d[T ]\d\d:\d\d`)
	rawUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// noRawValues requires a report to print no time but the seed's, and no uuid.
func noRawValues(t *testing.T, text string) {
	t.Helper()
	require.NotContains(t, text, "⟦", "an unnumbered placeholder")
	for _, m := range rawTime.FindAllString(text, -1) {
		require.Equal(t, "2026-10-01T08:00", m, "a raw time in the report:\n%s", text)
	}
	require.Empty(t, rawUUID.FindAllString(text, -1), "a raw uuid in the report:\n%s", text)
}

func TestGuardedNowPassesWithNoOptions(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("ship order 11", shipGuardedSQL), twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"orders.shipped_at"}, rep.Varying)
	require.Equal(t, []string{"sequential", "crash@1", "crash@2", "crash@3", "crash@end", "duplicate-enqueue"}, withoutConcurrent(rep.Tokens()))
}

func TestUnguardedNowIsFlaggedWithoutRawTimes(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("ship order 11, unguarded", shipUnguardedSQL))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens)
	noRawValues(t, rep.String())
	require.Equal(t, "orders:\n"+
		"  - (id=11, status='shipped', shipped_at=‹time 1›, ship_count=1)\n"+
		"  + (id=11, status='shipped', shipped_at=‹time 2›, ship_count=2)\n",
		pgfixture.FormatDiff(rep.Findings[0].Database))
}

func TestRandomUUIDUnderANaturalKeyPasses(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("sign up ann", signupKeySQL))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"users.token"}, rep.Varying)
}

func TestRandomUUIDWithoutANaturalKeyIsFlaggedWithoutRawUUIDs(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("sign up ann, no key", signupNoKeySQL))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens)
	noRawValues(t, rep.String())
	require.Equal(t, "signups:\n"+
		"  + (email='ann@example.com', token=‹uuid 1›)\n",
		pgfixture.FormatDiff(rep.Findings[0].Database))
}

func TestOneUUIDInTwoTablesComparesConsistently(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("user and session", userAndSessionSQL))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"sessions.token", "users.token"}, rep.Varying)
}

func TestSwappingWhichRowGetsWhichUUIDIsAFinding(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("users and sessions, wrong join", swapUsersSQL, swapSessionsSQL), twice.WithoutConcurrency("the swap is sequential"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, tokens)
	text := rep.String()
	noRawValues(t, text)
	// Every column holds the same values as the reference; only which
	// session has which user's token differs.
	require.Equal(t, "sessions:\n"+
		"  - (email='ann@example.com', token=‹uuid 1›)\n"+
		"  - (email='bob@example.com', token=‹uuid 2›)\n"+
		"  + (email='ann@example.com', token=‹uuid 3›)\n"+
		"  + (email='bob@example.com', token=‹uuid 4›)\n"+
		"users:\n"+
		"  - (email='ann@example.com', token=‹uuid 1›)\n"+
		"  - (email='bob@example.com', token=‹uuid 2›)\n"+
		"  + (email='ann@example.com', token=‹uuid 4›)\n"+
		"  + (email='bob@example.com', token=‹uuid 3›)\n",
		pgfixture.FormatDiff(rep.Findings[0].Database))
}

// newUUID is a random (version 4) uuid made in Go.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// goValuesJob writes a time.Now() and a uuid made in Go into a row: once,
// under the event's name, or every time into a log.
func goValuesJob(name string, once bool) twice.Job {
	sql := `INSERT INTO events (name, at, ref) VALUES ('shipped', $1, $2) ON CONFLICT (name) DO NOTHING`
	if !once {
		sql = `INSERT INTO event_log (name, at, ref) VALUES ('shipped', $1, $2)`
	}
	return twice.Job{Name: name, Schema: varyingSchema, Seed: varyingSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, sql, time.Now(), newUUID())
		return err
	}}
}

func TestValuesMadeInGo(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, goValuesJob("event once", true))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"events.at", "events.ref"}, rep.Varying)

	rep, tokens = findingTokens(t, goValuesJob("event log", false), twice.WithoutConcurrency("sequential is enough"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, tokens)
	noRawValues(t, rep.String())
	require.Equal(t, "event_log:\n"+
		"  + (name='shipped', at=‹time 1›, ref=‹uuid 1›)\n",
		pgfixture.FormatDiff(rep.Findings[0].Database))
}

// A time from a.Now(), the check's clock, is the same in every run: it
// compares exactly and is not reported.
func TestTheChecksClockComparesExactly(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "ship at a.Now()", Schema: varyingSchema, Seed: varyingSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET status = 'shipped', shipped_at = $1, ship_count = ship_count + 1 WHERE id = 11`, a.Now())
		return err
	}}
	rep, tokens := findingTokens(t, job, twice.WithoutConcurrency("sequential is enough"))
	require.Empty(t, rep.Varying)
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, tokens)
	require.Equal(t, "orders:\n"+
		"  - (id=11, status='shipped', shipped_at=2026-10-12T09:00:00Z, ship_count=1)\n"+
		"  + (id=11, status='shipped', shipped_at=2026-10-12T09:00:00Z, ship_count=2)\n",
		pgfixture.FormatDiff(rep.Findings[0].Database))
}

func TestExactValuesComparesNowByValueAndHints(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("ship order 11", shipGuardedSQL), twice.ExactValues(), twice.Only("sequential"))
	require.Equal(t, []string{"sequential"}, tokens)
	f := rep.Findings[0]
	require.Equal(t, "orders:\n"+
		"  - (id=11, status='shipped', shipped_at=‹time 1›, ship_count=0)\n"+
		"  + (id=11, status='shipped', shipped_at=‹time 2›, ship_count=0)\n",
		pgfixture.FormatDiff(f.Database))
	require.Equal(t, []string{"orders differs only in shipped_at (timestamptz), a time that differs between two clean runs too (now(), time.Now()): " +
		"take it from a.Now(), the check's clock, which stands still across redeliveries, or drop twice.ExactValues() to compare it by shape (NULL or not, equal where it should be)"},
		f.Hints)
	noRawValues(t, rep.String())

	// IgnoreColumns and Normalize keep working with ExactValues and without.
	for _, opt := range []twice.Option{twice.IgnoreColumns("orders.shipped_at"), twice.Normalize("orders.shipped_at", setOrNull)} {
		rep, tokens = findingTokens(t, varyingJob("ship order 11", shipGuardedSQL), opt, twice.ExactValues(), twice.WithoutConcurrency("sequential is enough"))
		require.Empty(t, tokens, rep.String())
		require.Empty(t, rep.Varying)
	}
}

// A time column the two clean runs agreed on (a now() truncated to the
// day) is still the wall clock's: it is compared by shape.
func TestTruncatedNowIsTheWallClocks(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, varyingJob("ship order 11 today",
		`UPDATE orders SET status = 'shipped', shipped_at = date_trunc('day', now()) WHERE id = 11 AND shipped_at IS NULL`),
		twice.WithoutConcurrency("sequential is enough"))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"orders.shipped_at"}, rep.Varying)
}

// An email that carries the time the job wrote: the same value in the row
// and the email, so one renaming covers both.
func shipAndEmail(guarded bool) twice.Job {
	sql := shipGuardedSQL
	if !guarded {
		sql = shipUnguardedSQL
	}
	return twice.Job{Name: "ship and email", Schema: varyingSchema, Seed: varyingSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		var at time.Time
		err := a.Pool.QueryRow(ctx, sql+` RETURNING shipped_at`).Scan(&at)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		return a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Order 11 shipped",
			Body: "Shipped at " + at.UTC().Format(time.RFC3339Nano) + "."})
	}}
}

func TestAnEffectCarryingAFreshValue(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, shipAndEmail(true), twice.EffectPolicy("email", effects.AtMostOnce), twice.WithoutConcurrency("sequential is enough"))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, []string{"orders.shipped_at", "email effect ann@example.com: word 8"}, rep.Varying)

	rep, tokens = findingTokens(t, shipAndEmail(false), twice.WithoutConcurrency("sequential is enough"), twice.Only("sequential"))
	require.Equal(t, []string{"sequential"}, tokens)
	text := rep.String()
	noRawValues(t, text)
	f := rep.Findings[0]
	var got []string
	for _, m := range f.Effects {
		got = append(got, m.String())
	}
	require.Equal(t, []string{
		`email ann@example.com "Order 11 shipped\nShipped at ‹time 1›.": want 1, got 0 (exactly-once)`,
		`email ann@example.com "Order 11 shipped\nShipped at ‹time 3›.": want 0, got 1 (exactly-once)`,
		`email ann@example.com "Order 11 shipped\nShipped at ‹time 2›.": want 0, got 1 (exactly-once)`,
	}, got, text)
}

// A table that differs only in a time the two clean runs agreed on (here
// a.Now(), moved by a late redrive) gets the hint too, and the time prints
// exactly.
func TestATimeOnlyDifferenceGetsAHint(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "ship at a.Now(), then email", Schema: varyingSchema, Seed: varyingSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET status = 'shipped', shipped_at = $1 WHERE id = 11`, a.Now()); err != nil {
			return err
		}
		return a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Order 11 shipped"})
	}}
	rep, tokens := findingTokens(t, job, twice.LateRedrive(48*time.Hour), twice.EffectPolicy("email", effects.AtLeastOnce),
		twice.WithoutConcurrency("sequential is enough"), twice.Only("redrive-48h@2"))
	require.Equal(t, []string{"redrive-48h@2"}, tokens)
	f := rep.Findings[0]
	require.Equal(t, "orders:\n"+
		"  - (id=11, status='shipped', shipped_at=2026-10-12T09:00:00Z, ship_count=0)\n"+
		"  + (id=11, status='shipped', shipped_at=2026-10-14T09:00:00Z, ship_count=0)\n",
		pgfixture.FormatDiff(f.Database))
	require.Equal(t, []string{"orders differs only in shipped_at (timestamptz): if it comes from the wall clock (now(), time.Now()), " +
		"take it from a.Now(), the check's clock, which stands still across redeliveries; twice compares by shape only the values that differ between two clean runs, and this one did not"},
		f.Hints)
}
