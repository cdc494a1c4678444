package effects_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

var receipt = effects.Email{To: "ann@example.com", Subject: "Your receipt", Body: "Order 9812: 50 points."}

func TestMailerSends(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{job: "9812"}
	m := effects.NewMailer(log, g)
	require.NoError(t, m.Send(context.Background(), receipt))
	require.NoError(t, m.Send(context.Background(), receipt), "an email provider deduplicates nothing")
	assert.Equal(t, []effects.Effect{
		{Kind: "email", Key: "ann@example.com", Payload: "Your receipt\nOrder 9812: 50 points.", Origin: effects.Origin{JobID: "9812", Attempt: 1, Point: 1}, Seq: 1},
		{Kind: "email", Key: "ann@example.com", Payload: "Your receipt\nOrder 9812: 50 points.", Origin: effects.Origin{JobID: "9812", Attempt: 1, Point: 2}, Seq: 2},
	}, log.Effects())
	assert.Equal(t, []string{
		"before email: email to ann@example.com: Your receipt",
		"after email: email to ann@example.com: Your receipt",
		"before email: email to ann@example.com: Your receipt",
		"after email: email to ann@example.com: Your receipt",
	}, g.Calls())
}

func TestMailerRefused(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{before: errCrashed}
	err := effects.NewMailer(log, g).Send(context.Background(), receipt)
	require.ErrorIs(t, err, errCrashed)
	assert.EqualError(t, err, "effects: email to ann@example.com: Your receipt: refused: attempt crashed")
	assert.Empty(t, log.Effects(), "a refused call reaches nothing")
	assert.Len(t, g.Calls(), 1, "no After for a refused call")
}

func TestMailerReplyLost(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{job: "9812", after: errReplyLost}
	err := effects.NewMailer(log, g).Send(context.Background(), receipt)
	require.ErrorIs(t, err, errReplyLost)
	assert.EqualError(t, err, "effects: email to ann@example.com: Your receipt: applied, but the reply was lost: reply lost")
	require.Len(t, log.Effects(), 1, "the email stays sent")
}

func TestMailerWithoutGate(t *testing.T) {
	log := effects.NewLog()
	m := effects.NewMailer(log, nil)
	require.NoError(t, m.Send(context.Background(), receipt))
	assert.True(t, log.Effects()[0].Origin.IsZero())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := m.Send(ctx, receipt)
	assert.True(t, errors.Is(err, context.Canceled), "a cancelled context sends nothing: %v", err)
	assert.Equal(t, 1, log.Len())
}

func TestWebhookSink(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{job: "j1"}
	w := effects.NewWebhookSink(log, g)
	require.NoError(t, w.Post(context.Background(), "https://hooks.example.com/orders", []byte(`{"order":9812}`)))
	require.NoError(t, w.Post(context.Background(), "https://hooks.example.com/orders", []byte(`{"order":9812}`)))
	assert.Equal(t, []effects.Effect{
		{Kind: "webhook", Key: "https://hooks.example.com/orders", Payload: `{"order":9812}`, Origin: effects.Origin{JobID: "j1", Attempt: 1, Point: 1}, Seq: 1},
		{Kind: "webhook", Key: "https://hooks.example.com/orders", Payload: `{"order":9812}`, Origin: effects.Origin{JobID: "j1", Attempt: 1, Point: 2}, Seq: 2},
	}, log.Effects())
	assert.Equal(t, "before webhook: webhook POST https://hooks.example.com/orders", g.Calls()[0])

	g.before = errCrashed
	require.ErrorIs(t, w.Post(context.Background(), "https://hooks.example.com/orders", nil), errCrashed)
	g.before, g.after = nil, errReplyLost
	require.ErrorIs(t, w.Post(context.Background(), "https://hooks.example.com/orders", nil), errReplyLost)
	assert.Equal(t, 3, log.Len())
}
