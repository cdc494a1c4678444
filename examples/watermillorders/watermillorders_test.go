package watermillorders_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/watermillorders"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicewatermill"
)

// Every form is flagged by exactly the scenarios it lists, none of them
// concurrent, and the fixed ones pass.
func TestForms(t *testing.T) {
	for _, f := range watermillorders.Forms() {
		t.Run(f.Name, func(t *testing.T) {
			rep := twice.Check(t.Context(), f.Job, f.Options...)
			require.NoError(t, rep.Err)
			require.Equal(t, f.Flagged, story.Sequential(rep), rep.String())
			require.Empty(t, story.Concurrent(rep), "watermill-sql takes one message at a time:\n%s", rep)
		})
	}
}

// The receipt in the outbox is emailed once, by the receipts handler; the
// one published after the commit is lost to a crash in between.
func TestReceiptInTheOutboxIsEmailedOnce(t *testing.T) {
	twicewatermill.AssertIdempotent(t, watermillorders.Job("receipt-in-outbox",
		func(a *twice.Attempt) message.NoPublishHandlerFunc { return watermillorders.RewardWithReceipt(a.Pool) }))

	rep := twicewatermill.Check(t.Context(), watermillorders.Job("receipt-outside-tx",
		func(a *twice.Attempt) message.NoPublishHandlerFunc {
			return watermillorders.RewardThenPublish(a.Pool, twicewatermill.NewPublisher(a))
		}))
	f := story.Find(rep, "crash@5")
	require.NotNil(t, f, rep.String())
	require.Contains(t, rep.String(), twicewatermill.EffectKind)
}
