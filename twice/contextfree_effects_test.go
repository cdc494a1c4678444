package twice_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/twice"
)

// An effect call on the attempt's handles without the attempt's context is
// the attempt running on that worker, as a statement is (issue 30): a
// mailer written against context.Background() is checked like any other.

var shippedEmail = effects.Email{To: "ada@example.com", Subject: "Order 6735 has shipped"}

// emailEveryDelivery sends the email on context.Background() on every
// delivery, then marks the order: a redelivery sends it again.
func emailEveryDelivery(ctx context.Context, a *twice.Attempt) error {
	if err := a.Mailer.Send(context.Background(), shippedEmail); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
	return err
}

// emailOnce marks the order first and sends only when its mark took:
// at most once, whatever the queue does.
func emailOnce(ctx context.Context, a *twice.Attempt) error {
	tag, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735 AND NOT notified`)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return a.Mailer.Send(context.Background(), shippedEmail)
}

func TestAContextFreeMailerIsChecked(t *testing.T) {
	t.Parallel()
	atMostOnce := twice.EffectPolicy(effects.KindEmail, effects.AtMostOnce)
	rep, tokens := findingTokens(t, orderJob("email on background", emailEveryDelivery), atMostOnce)
	require.Contains(t, tokens, "sequential", rep.String())
	require.NotContains(t, rep.String(), "bypassed")
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	require.Equal(t, []string{`email ada@example.com "Order 6735 has shipped": want 1, got 2 (at-most-once)`}, mismatchStrings(f.Effects))
	// The email is point 1 of the attempt, with its effect scenarios.
	require.Equal(t, "email to ada@example.com: Order 6735 has shipped", rep.Reference.Attempts[0].Points[0].Label)
	require.Equal(t, effects.Origin{JobID: "job-1", Attempt: 1, Point: 1}, rep.Reference.Effects[0].Origin)
	require.Contains(t, rep.Tokens(), "crash-after@1")

	rep, tokens = findingTokens(t, orderJob("email once on background", emailOnce), atMostOnce)
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "crash-after@2")
}

// Every effect handle without the attempt's context: a.Webhooks, a.Effect,
// a.HTTP with a request made by http.NewRequest.
func TestEveryContextFreeEffectIsAPoint(t *testing.T) {
	t.Parallel()
	api := &partnerAPI{}
	job := orderJob("context-free effects", func(ctx context.Context, a *twice.Attempt) error {
		bg := context.Background()
		if err := a.Webhooks.Post(bg, "https://hooks.example/shipped", []byte(`{"order":6735}`)); err != nil {
			return err
		}
		if err := a.Effect(bg, "sms", "+15550100", "shipped", nil); err != nil {
			return err
		}
		req, err := http.NewRequest(http.MethodPost, "http://partner.example/v2/shipments", strings.NewReader(`{"order":6735}`)) //nolint:noctx // the point of the test
		if err != nil {
			return err
		}
		req.Header.Set("Idempotency-Key", "ship-6735")
		resp, err := a.HTTP.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		_, err = a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	})
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", api), twice.Only("crash-after@3"))
	require.NoError(t, rep.Err)
	var labels []string
	for _, p := range rep.Reference.Attempts[0].Points {
		labels = append(labels, p.Label)
	}
	require.Equal(t, []string{"webhook POST https://hooks.example/shipped", `sms +15550100 "shipped"`,
		"http POST partner.example/v2/shipments (Idempotency-Key ship-6735)", "UPDATE orders SET notified = true WHERE id = 6735"}, labels)
	require.NotContains(t, rep.String(), "bypassed")
	// crash-after@3: the partner's request applied, the attempt died, and
	// the redelivery posts the webhook and the text again.
	require.Len(t, rep.Findings, 1, rep.String())
	require.Equal(t, "crash-after@3", rep.Findings[0].Token)
}

// TestAContextFreeEffectAfterRunIsAPointAfterTheAck: a goroutine the
// attempt left running that sends on context.Background() after Run
// returned runs after the ack, as in production (issue 39, item 3; it was
// the after-Run finding): the email is the attempt's point 2, and the crash
// after the ack, before it, loses it.
func TestAContextFreeEffectAfterRunIsAPointAfterTheAck(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("email after return", func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
			return err
		}
		returning := make(chan struct{})
		defer close(returning)
		go func() {
			<-returning
			time.Sleep(afterReturn) // Run has returned by now
			_ = a.Mailer.Send(context.Background(), shippedEmail)
		}()
		return nil
	}))
	require.NoError(t, rep.Err)
	require.Equal(t, twice.Kept, rep.Reference.Verdict, rep.String())
	points := rep.Reference.Attempts[0].Points
	require.Len(t, points, 2, rep.String())
	require.Equal(t, "email to ada@example.com: Order 6735 has shipped", points[1].Label)
	require.True(t, points[1].AfterAck)
	var lost *twice.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Token == "crash@2" {
			lost = &rep.Findings[i]
		}
	}
	require.NotNil(t, lost, rep.String())
	require.Equal(t, []string{`email ada@example.com "Order 6735 has shipped": want 1, got 0 (exactly-once)`}, mismatchStrings(lost.Effects))
}

// TestAnotherAttemptsContextIsStillRefused: a job that keeps the context
// of its first delivery and sends with it later has that call refused
// (faults.ErrFinished): it is never the running attempt's.
func TestAnotherAttemptsContextIsStillRefused(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		kept context.Context
	)
	var refused []error
	rep := twice.Check(context.Background(), orderJob("kept context", func(ctx context.Context, a *twice.Attempt) error {
		mu.Lock()
		if kept == nil {
			kept = ctx
		}
		k := kept
		mu.Unlock()
		err := a.Mailer.Send(k, shippedEmail)
		if err != nil {
			mu.Lock()
			refused = append(refused, err)
			mu.Unlock()
			return err
		}
		_, err = a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	}))
	require.NoError(t, rep.Err)
	require.False(t, rep.OK(), rep.String())
	require.Contains(t, rep.String(), "the attempt had already returned; its context is no longer usable")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, refused)
	require.True(t, errors.Is(refused[0], faults.ErrFinished), "%v", refused[0])
}
