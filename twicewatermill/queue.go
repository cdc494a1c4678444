package twicewatermill

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// queue plays watermill-sql for one check: the producer's row in the
// topic's table (a duplicate's under another UUID), the subscriber handing
// the message to the router's handler inside its middleware, and the
// consumer group's offset after the ack.
type queue struct {
	job Job

	mu     sync.Mutex
	checks map[*pgxpool.Pool]*checkState // by the check's own pool
}

// checkState is what watermill-sql's tables hold for one check's scenario,
// beyond the application's rows: which messages the consumer group acked.
type checkState struct {
	acked map[string]bool // by the check's job ID, or the follow-up's key
}

func newQueue(job Job) *queue {
	return &queue{job: job, checks: map[*pgxpool.Pool]*checkState{}}
}

// options are watermill-sql's delivery semantics as twice options. There
// is no AckInJobTransaction: the subscriber acks in its own transaction
// (sql.TxFromContext, which would put the work in it, is not played).
func (q *queue) options() []twice.Option {
	return []twice.Option{
		twice.QueueBookkeeping(q.fetch, q.settle),
		twice.QueueWords(q.words),
		twice.WithoutConcurrency(oneAtATime),
		twice.IgnoreColumns(volatileColumns...),
	}
}

// oneAtATime is why watermill-sql never runs two deliveries at once.
const oneAtATime = "watermill-sql's subscriber holds its consumer group's offsets row FOR UPDATE from the SELECT of a message to its ack: the group takes one message at a time, so neither a message and its redelivery nor a message and its duplicate run at once"

// volatileColumns are the columns of watermill-sql's message tables that
// differ from one run to the next: the UUID watermill.NewUUID makes for a
// published message, the insert's time and its transaction's ID.
var volatileColumns = []string{"uuid", "created_at", "transaction_id"}

// uuidOf is the UUID of the message the check delivers as jobID: the
// producer's for the first, a new one for a duplicate.
func (q *queue) uuidOf(jobID string) string {
	if jobID == "job-1" && q.job.Message.UUID != "" {
		return q.job.Message.UUID
	}
	n := 1
	_, _ = fmt.Sscanf(jobID, "job-%d", &n)
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
}

// fetch is watermill-sql's subscriber before a delivery: it selects the
// first message past its consumer group's offset, so a message the group
// acked is never delivered again.
func (q *queue) fetch(_ context.Context, db *pgxpool.Pool, d twice.Delivery) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st == nil {
		st = &checkState{acked: map[string]bool{}}
		q.checks[db] = st
	}
	if d.JobID == "job-1" && d.Number == 1 {
		clear(st.acked) // a new scenario (its first delivery)
	}
	key := d.JobID
	if d.FollowUp != "" {
		key = d.FollowUp
	}
	if st.acked[key] {
		return "watermill-sql does not deliver a message its consumer group acked (the offset is past it)", nil
	}
	return "", nil
}

// settle is the router and the subscriber after the handler returned:
// acked (the consumer group's offset moved past the message) or nacked
// (the subscriber sends the message again after its ResendInterval).
func (q *queue) settle(_ context.Context, db *pgxpool.Pool, d twice.Delivery) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.checks[db]
	if st == nil {
		return fmt.Errorf("twicewatermill: internal error: %s was settled before it was fetched", d.JobID)
	}
	key := d.JobID
	if d.FollowUp != "" {
		key = d.FollowUp
	}
	if d.Err == nil {
		st.acked[key] = true
	}
	return nil
}

// run is one delivery of the checked message: the router calling the
// handler inside its middleware, then publishing what it returned, then
// the ack.
func (q *queue) run(ctx context.Context, a *twice.Attempt) error {
	msg := message.NewMessage(q.uuidOf(a.JobID), append([]byte(nil), q.job.Message.Payload...))
	for k, v := range q.job.Message.Metadata {
		msg.Metadata.Set(k, v)
	}
	var h message.HandlerFunc
	var pub message.Publisher
	if q.job.Handler != nil {
		h = q.job.Handler(a)
		if h == nil {
			return errors.New("twicewatermill: Job.Handler returned a nil handler")
		}
		pub = NewPublisher(a)
		if q.job.Publisher != nil {
			if pub = q.job.Publisher(a); pub == nil {
				return errors.New("twicewatermill: Job.Publisher returned a nil publisher")
			}
		}
	} else {
		nh := q.job.NoPublishHandler(a)
		if nh == nil {
			return errors.New("twicewatermill: Job.NoPublishHandler returned a nil handler")
		}
		h = func(m *message.Message) ([]*message.Message, error) { return nil, nh(m) }
	}
	return q.deliver(ctx, a, msg, h, q.job.PublishTopic, pub)
}

// NackedError is what a delivery returns when the router nacked the
// message: watermill-sql sends it again after its ResendInterval, with no
// limit (the poison queue middleware is what ends it).
type NackedError struct {
	// UUID is the message's.
	UUID string
	// Err is why: the handler's error, its panic, or the publish of what
	// it returned.
	Err error
}

func (e *NackedError) Error() string {
	return fmt.Sprintf("the router nacked message %s: %v", e.UUID, e.Err)
}

func (e *NackedError) Unwrap() error { return e.Err }

// deliver is watermill's router handling one message (router.go's
// handleMessage): the middleware wrapped around h, the first outermost; a
// panic recovered and nacked; an error nacked; the returned messages
// published to topic with pub, a failed publish nacked; then the ack.
func (q *queue) deliver(ctx context.Context, a *twice.Attempt, msg *message.Message, h message.HandlerFunc, topic string, pub message.Publisher) (err error) {
	msgCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	msg.SetContext(msgCtx)
	if q.job.Middleware != nil {
		mws := q.job.Middleware(a)
		for i := len(mws) - 1; i >= 0; i-- {
			if mws[i] == nil {
				return fmt.Errorf("twicewatermill: Job.Middleware's middleware %d is nil", i+1)
			}
			h = mws[i](h)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			msg.Nack()
			err = &NackedError{UUID: msg.UUID, Err: fmt.Errorf("the handler panicked (the router recovered it): %v", r)}
		}
	}()
	produced, herr := h(msg)
	if herr != nil {
		msg.Nack()
		return &NackedError{UUID: msg.UUID, Err: herr}
	}
	if len(produced) > 0 {
		if pub == nil {
			msg.Nack()
			return &NackedError{UUID: msg.UUID, Err: message.ErrOutputInNoPublisherHandler}
		}
		if perr := pub.Publish(topic, produced...); perr != nil {
			msg.Nack()
			return &NackedError{UUID: msg.UUID, Err: fmt.Errorf("publishing the messages the handler returned: %w", perr)}
		}
	}
	if !msg.Ack() {
		return &NackedError{UUID: msg.UUID, Err: errors.New("the handler nacked the message itself (msg.Nack)")}
	}
	return nil
}
