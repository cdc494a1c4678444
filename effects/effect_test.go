package effects_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

func TestRecorderDo(t *testing.T) {
	log := effects.NewLog()
	g := &fakeGate{job: "6735"}
	r := effects.NewRecorder(log, g)
	ctx := context.Background()
	ran := 0
	require.NoError(t, r.Do(ctx, "sms", "+15550100", "Your order 6735 shipped", func(context.Context) error { ran++; return nil }))
	require.NoError(t, r.Do(ctx, "publish", "orders.shipped", map[string]any{"order": 6735, "carrier": "ups"}, nil))
	require.NoError(t, r.Do(ctx, "slack", "#ops", []byte("a very long message that does not fit in a timeline label at all"), nil))
	assert.Equal(t, 1, ran)
	assert.Equal(t, []effects.Effect{
		{Kind: "sms", Key: "+15550100", Payload: "Your order 6735 shipped", Origin: effects.Origin{JobID: "6735", Attempt: 1, Point: 1}, Seq: 1},
		{Kind: "publish", Key: "orders.shipped", Payload: `{"carrier":"ups","order":6735}`, Origin: effects.Origin{JobID: "6735", Attempt: 1, Point: 2}, Seq: 2},
		{Kind: "slack", Key: "#ops", Payload: "a very long message that does not fit in a timeline label at all", Origin: effects.Origin{JobID: "6735", Attempt: 1, Point: 3}, Seq: 3},
	}, log.Effects())
	assert.Equal(t, []string{
		`before sms: sms +15550100 "Your order 6735 shipped"`,
		`after sms: sms +15550100 "Your order 6735 shipped"`,
		`before publish: publish orders.shipped "{\"carrier\":\"ups\",\"order\":6735}"`,
		`after publish: publish orders.shipped "{\"carrier\":\"ups\",\"order\":6735}"`,
		`before slack: slack #ops "a very long message that does not fit in…"`,
		`after slack: slack #ops "a very long message that does not fit in…"`,
	}, g.Calls())
}

func TestRecorderDoFailures(t *testing.T) {
	ctx := context.Background()
	log := effects.NewLog()

	// The real call failed: nothing happened, nothing is recorded, After is not asked.
	g := &fakeGate{job: "j"}
	boom := errors.New("carrier down")
	err := effects.NewRecorder(log, g).Do(ctx, "sms", "+15550100", "hi", func(context.Context) error { return boom })
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, `effects: sms +15550100 "hi": carrier down`)
	assert.Equal(t, []string{`before sms: sms +15550100 "hi"`}, g.Calls())

	// Refused: do never runs.
	err = effects.NewRecorder(log, &fakeGate{before: errCrashed}).Do(ctx, "sms", "+15550100", "hi", func(context.Context) error {
		t.Fatal("a refused effect ran")
		return nil
	})
	require.ErrorIs(t, err, errCrashed)
	assert.EqualError(t, err, `effects: sms +15550100 "hi": refused: attempt crashed`)

	// Applied, then the reply was lost: the effect stays.
	err = effects.NewRecorder(log, &fakeGate{job: "j", after: errReplyLost}).Do(ctx, "sms", "+15550100", "hi", nil)
	require.ErrorIs(t, err, errReplyLost)
	assert.EqualError(t, err, `effects: sms +15550100 "hi": applied, but the reply was lost: reply lost`)
	assert.Equal(t, 1, log.Len())

	// Bad input: said, and nothing done.
	err = effects.NewRecorder(log, nil).Do(ctx, "", "k", "p", nil)
	assert.EqualError(t, err, `effects: an effect needs a kind (a name such as "sms"; policies are declared per kind)`)
	err = effects.NewRecorder(log, nil).Do(ctx, "metric", "k", math.Inf(1), nil)
	assert.ErrorContains(t, err, "effects: metric k: the payload cannot be rendered as JSON (pass a string, []byte, or a JSON-encodable value)")
	assert.Equal(t, 1, log.Len())

	// Without a gate a cancelled context refuses.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = effects.NewRecorder(log, nil).Do(cancelled, "sms", "+1", "x", nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestCanonicalPayload(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {"text", "text"}, {[]byte("bytes"), "bytes"}, {42, "42"},
		{map[string]int{"b": 2, "a": 1}, `{"a":1,"b":2}`},
		{struct {
			To   string `json:"to"`
			Text string `json:"text"`
		}{"+1", "hi"}, `{"to":"+1","text":"hi"}`},
	} {
		got, err := effects.CanonicalPayload(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}

// The adapters an app needs for its own interfaces: the fakes implement the
// small interfaces as they are.
var (
	_ effects.EmailSender   = (*effects.Mailer)(nil)
	_ effects.WebhookPoster = (*effects.WebhookSink)(nil)
)
