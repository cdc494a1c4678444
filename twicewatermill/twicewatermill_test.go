package twicewatermill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/twicekit/twicekit/twice"
)

func findings(rep *twice.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Token)
	}
	return out
}

func job(orderID int64, h func(a *twice.Attempt) message.NoPublishHandlerFunc) Job {
	return Job{Schema: schema, Seed: seed, Topic: ordersTopic,
		Message: message.NewMessage("7c1d7a55-0000-4000-8000-000000009812", payload(orderID)), NoPublishHandler: h}
}

// An unguarded increment is flagged where the subscriber's ack, in its own
// transaction after the handler returned, never commits, and by a
// duplicate message; the headlines say so in watermill-sql's words.
func TestUnguardedIncrementIsFlaggedInWatermillWords(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return reward(a.Pool) }))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[sequential crash@end duplicate-enqueue]" {
		t.Fatalf("flagged by %s, want [sequential crash@end duplicate-enqueue]:\n%s", got, rep)
	}
	for _, want := range []string{"the subscriber's transaction (the consumer group's offset) never committed", "before its ack committed the offset", "the copy under another UUID", oneAtATime} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, rep)
		}
	}
}

// A handler that marks its order processed in a transaction of its own,
// then adds the points, is flagged: a crash between the two loses the
// points (the redelivery finds the mark). Its twin, doing both in one
// transaction, passes, the duplicate message too (the key is the order's).
func TestMarkProcessedThenWorkIsFlagged(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return markThenReward(a.Pool) }))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[crash@2]" {
		t.Fatalf("flagged by %v, want [crash@2] (a crash after the mark, before the points):\n%s", got, rep)
	}
	if !strings.Contains(rep.String(), "customers") {
		t.Errorf("the report does not name the lost points (customers):\n%s", rep)
	}
}

func TestMarkProcessedAndWorkInOneTransactionPasses(t *testing.T) {
	t.Parallel()
	AssertIdempotent(t, job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return markAndReward(a.Pool) }))
}

// A check-then-act on the message's UUID is flagged only by a duplicate
// message (another UUID): watermill-sql never runs two deliveries of one
// message at once, so no overlap plays. The same handler under the generic
// queue, which does run them at once, is flagged by an overlap.
func TestCheckThenActIsFlaggedOnlyByADuplicateMessage(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return checkThenAct(a.Pool) }))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[duplicate-enqueue]" {
		t.Fatalf("flagged by %s, want [duplicate-enqueue]:\n%s", got, rep)
	}
	for _, s := range rep.Scenarios {
		switch s.Scenario.Kind {
		case twice.Overlap, twice.Interleaved, twice.DuplicateOverlap, twice.DuplicateInterleaved:
			t.Errorf("a concurrent scenario played (%s): watermill-sql takes one message at a time", s.Scenario.Token())
		}
	}
	generic := twice.Check(t.Context(), twice.Job{Name: "check-then-act, generic queue", Schema: schema, Seed: seed,
		Run: func(ctx context.Context, a *twice.Attempt) error {
			msg := message.NewMessage("7c1d7a55-0000-4000-8000-000000009812", payload(9812))
			msg.SetContext(ctx)
			return checkThenAct(a.Pool)(msg)
		}}, twice.WithoutDuplicateEnqueue("the generic queue's overlap is what this test shows"))
	if generic.Err != nil {
		t.Fatal(generic.Err)
	}
	overlap := false
	for _, f := range generic.Findings {
		overlap = overlap || strings.HasPrefix(f.Token, "overlap@") || strings.HasPrefix(f.Token, "interleaved")
	}
	if !overlap {
		t.Fatalf("the generic queue's check did not flag an overlap: %v\n%s", findings(generic), generic)
	}
}

// A nacked message is delivered again (watermill-sql's ResendInterval, no
// limit): where the receipt's publish reached the broker but its reply was
// lost, the handler returns the error, the router nacks, and the second
// delivery finds the order processed and is acked.
func TestNackedMessageIsDeliveredAgain(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return rewardThenPublish(a.Pool, NewPublisher(a)) }))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	played := false
	for _, s := range rep.Scenarios {
		if s.Scenario.Kind != twice.ReplyLost {
			continue
		}
		played = true
		var nacked *NackedError
		if len(s.Attempts) != 2 || !errors.As(s.Attempts[0].Err, &nacked) || s.Attempts[1].Err != nil {
			t.Errorf("%s: want a nacked delivery then an acked one, got %d deliveries (first: %v)", s.Scenario.Token(), len(s.Attempts), s.Attempts[0].Err)
		}
	}
	if !played {
		t.Fatalf("no reply-lost scenario played: %v", rep.Tokens())
	}
}

// middleware.Retry retries inside one delivery: the same handler, its
// failures retried by the router's middleware, is acked on the first
// delivery.
func TestRetryMiddlewareRetriesInsideOneDelivery(t *testing.T) {
	t.Parallel()
	j := job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return failing(a.Pool, 2) })
	j.Middleware = func(a *twice.Attempt) []message.HandlerMiddleware {
		return []message.HandlerMiddleware{middleware.Recoverer, middleware.Retry{MaxRetries: 3}.Middleware}
	}
	rep := Check(t.Context(), j)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if n := len(rep.Reference.Attempts); n != 1 {
		t.Fatalf("the reference run delivered the message %d times, want 1:\n%s", n, rep)
	}
}

// The poison queue: a handler that always fails has its message published
// to the poison topic, then acked. Through NewPublisher the poisoned
// message is an effect: a crash after it, before the ack, publishes it
// twice.
func TestPoisonQueueAcksAndItsPublishIsAnEffect(t *testing.T) {
	t.Parallel()
	j := job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return failing(a.Pool, 1000) })
	j.Middleware = func(a *twice.Attempt) []message.HandlerMiddleware {
		pq, err := middleware.PoisonQueue(NewPublisher(a), poisonTopic)
		if err != nil {
			panic(err)
		}
		return []message.HandlerMiddleware{pq}
	}
	rep := Check(t.Context(), j)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if n := len(rep.Reference.Attempts); n != 1 {
		t.Fatalf("the reference run delivered the message %d times, want 1 (poisoned, acked):\n%s", n, rep)
	}
	if got := findings(rep); !slices.Contains(got, "crash@end") || !strings.Contains(rep.String(), EffectKind) {
		t.Fatalf("flagged by %v, want crash@end with the poisoned message published twice:\n%s", got, rep)
	}
}

// Without a poison queue, a message that always fails is never acked: the
// clean run fails, and the report says the router nacked it.
func TestAlwaysFailingMessageIsNeverAcked(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return failing(a.Pool, 1000) }))
	if len(rep.Findings) == 0 || !strings.Contains(rep.String(), "the router nacked message 7c1d7a55") {
		t.Fatalf("an always-nacked message passed, or the report does not say it was nacked:\n%s", rep)
	}
}

// A receipt published through watermill-sql in the handler's own
// transaction is an outbox row; the receipts handler works it after every
// scenario, so every scenario sends one email: it passes.
func TestOutboxReceiptIsWorkedAsAFollowUp(t *testing.T) {
	t.Parallel()
	j := job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return rewardWithReceipt(a.Pool) })
	j.Handlers = handlers
	rep := Check(t.Context(), j)
	if rep.Err != nil || len(rep.Findings) > 0 {
		t.Fatalf("want a pass:\n%s", rep)
	}
	if e := rep.Reference.Effects; len(e) != 1 || e[0].Payload != "receipt for order 9812" {
		t.Fatalf("the receipts handler did not send one email in the reference run: %v\n%s", e, rep)
	}
}

// The same receipt published after the commit, through a publisher outside
// the transaction, on every delivery, is flagged: every redelivery (the ack
// lost, a crash before it, a lost reply) and the duplicate message publish
// it again. examples/watermillorders has the twin that publishes only when
// the points were new, which a crash before the publish loses.
func TestReceiptWithoutOutboxIsFlagged(t *testing.T) {
	t.Parallel()
	j := job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return rewardThenPublish(a.Pool, NewPublisher(a)) })
	rep := Check(t.Context(), j)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	want := "[sequential crash@end duplicate-enqueue crash-after@5 reply-lost@5]"
	if got := fmt.Sprint(findings(rep)); got != want || !strings.Contains(rep.String(), EffectKind+" receipts") {
		t.Fatalf("flagged by %s, want %s with the receipt published twice:\n%s", got, want, rep)
	}
}

// Messages a HandlerFunc returns are published by the router, before the
// ack: with NewPublisher they are effects, published again after a crash
// before the ack.
func TestReturnedMessagesArePublishedBeforeTheAck(t *testing.T) {
	t.Parallel()
	j := job(9812, nil)
	j.NoPublishHandler = nil
	j.PublishTopic = receiptsTopic
	j.Handler = func(a *twice.Attempt) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			if err := markAndReward(a.Pool)(msg); err != nil {
				return nil, err
			}
			return []*message.Message{message.NewMessage("receipt-9812", payload(9812))}, nil
		}
	}
	rep := Check(t.Context(), j)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := findings(rep); !slices.Contains(got, "crash@end") {
		t.Fatalf("flagged by %v, want crash@end (the receipt published twice):\n%s", got, rep)
	}
}

// A job without a topic, a message or a handler fails with what to set.
func TestIncompleteJobSaysWhatToSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		job  Job
		want string
	}{
		{Job{Schema: schema, Message: message.NewMessage("u", nil)}, "set Job.Topic"},
		{Job{Schema: schema, Topic: ordersTopic}, "set Job.Message"},
		{Job{Schema: schema, Topic: ordersTopic, Message: message.NewMessage("u", nil)}, "set Job.Handler"},
	} {
		rep := Check(t.Context(), c.job)
		if !strings.Contains(rep.String(), c.want) {
			t.Errorf("the report does not say %q:\n%s", c.want, rep)
		}
	}
}

// The same job checked twice gives the same report, word for word: the
// UUIDs watermill.NewUUID gives the outbox's receipts are left out.
func TestReportsAreDeterministic(t *testing.T) {
	t.Parallel()
	for _, j := range []Job{
		job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return reward(a.Pool) }),
		func() Job {
			j := job(9812, func(a *twice.Attempt) message.NoPublishHandlerFunc { return rewardWithReceipt(a.Pool) })
			j.Handlers = handlers
			return j
		}(),
	} {
		first, second := Check(t.Context(), j).String(), Check(t.Context(), j).String()
		if first != second {
			t.Errorf("two checks of %s differ:\n%s\n---\n%s", j.Topic, first, second)
		}
	}
}
