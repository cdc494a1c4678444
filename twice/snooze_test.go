package twice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// One fault, one delivery: a scenario's fault strikes the delivery it
// names; after a snooze every later delivery runs clean (issue 30).

var errNotReady = errors.New("not ready yet: deliver again later")

var notifySchema = pgfixture.SQL(`
CREATE TABLE orders (
  id       bigint  PRIMARY KEY,
  ready    boolean NOT NULL DEFAULT false,
  notified boolean NOT NULL DEFAULT false
);`)

// notifyWhenReady snoozes on its first delivery (the order is not ready: it
// marks it ready for the next one), then emails the customer. An email that
// fails is retried later as well (gue's ErrRescheduleJobIn, a generic
// SnoozeError): the queue delivers it again, not counted as a failure.
func notifyWhenReady(ctx context.Context, a *twice.Attempt) error {
	var ready bool
	if err := a.Pool.QueryRow(ctx, `SELECT ready FROM orders WHERE id = 1`).Scan(&ready); err != nil {
		return err
	}
	if !ready {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET ready = true WHERE id = 1`); err != nil {
			return err
		}
		return errNotReady
	}
	if err := a.Mailer.Send(ctx, effects.Email{To: "ann@example.com", Subject: "Your order is ready"}); err != nil {
		return fmt.Errorf("%w: %w", errNotReady, err)
	}
	_, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 1`)
	return err
}

func notifyJob() twice.Job {
	return twice.Job{Name: "notify when ready", Schema: notifySchema, Seed: twice.SeedSQL(`INSERT INTO orders (id) VALUES (1)`), Run: notifyWhenReady}
}

var snoozes = twice.SnoozeError(func(err error) bool { return errors.Is(err, errNotReady) })

func TestASnoozeOnTheCleanRunIsADelivery(t *testing.T) {
	t.Parallel()
	rep, tokens := findingTokens(t, notifyJob(), snoozes, twice.EffectPolicy("email", effects.AtLeastOnce), twice.EveryCrashPoint())
	require.Empty(t, tokens, rep.String())
	// The reference run is both deliveries; its points are numbered across
	// them: SELECT, UPDATE | SELECT, email, UPDATE.
	require.Len(t, rep.Reference.Attempts, 2)
	var labels []string
	for _, a := range rep.Reference.Attempts {
		for _, p := range a.Points {
			labels = append(labels, fmt.Sprintf("%d %s", p.Index, p.Label))
		}
	}
	require.Equal(t, []string{"1 SELECT ready FROM orders WHERE id = 1", "2 UPDATE orders SET ready = true WHERE id = 1",
		"3 SELECT ready FROM orders WHERE id = 1", "4 email to ann@example.com: Your order is ready", "5 UPDATE orders SET notified = true WHERE id = 1"}, labels)
	require.Contains(t, rep.Tokens(), "reply-lost@4")
	require.Contains(t, rep.Tokens(), "crash@5")

	// The fault strikes the delivery that reaches point 4 (the second),
	// once: the third delivery sends the email again, and only that.
	rep, tokens = findingTokens(t, notifyJob(), snoozes, twice.Only("reply-lost@4"))
	require.Equal(t, []string{"reply-lost@4"}, tokens, rep.String())
	require.Len(t, rep.Findings[0].Effects, 1)
	require.Equal(t, `email ann@example.com "Your order is ready": want 1, got 2 (exactly-once)`, rep.Findings[0].Effects[0].String())
	sr := rep.Scenarios[0]
	require.Len(t, sr.Attempts, 3, rep.String())
	require.Equal(t, []int{2, 2, 3}, pointCounts(sr))
	require.True(t, strings.Contains(rep.String(), "want 1, got 2"), rep.String())
}

func pointCounts(sr *twice.ScenarioRun) []int {
	var out []int
	for _, a := range sr.Attempts {
		out = append(out, len(a.Points))
	}
	return out
}

func TestASnoozeNeverEndingIsReportedAsSuch(t *testing.T) {
	t.Parallel()
	always := twice.Job{Name: "always later", Schema: notifySchema, Seed: twice.SeedSQL(`INSERT INTO orders (id) VALUES (1)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			_, err := a.Pool.Exec(ctx, `SELECT 1`)
			return errors.Join(err, errNotReady)
		}}
	rep, tokens := findingTokens(t, always, snoozes, twice.MaxDeliveries(3))
	require.Equal(t, []string{"once"}, tokens)
	require.Contains(t, rep.String(), "the job never finished on a clean run: it snoozed on every one of its 3 deliveries")
}
