package twicewatermill

import (
	"context"
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// Job is a watermill handler under a check: the message a producer
// publishes to a topic, the handler the application's router runs for that
// topic with its middleware, the application's schema and the data every
// scenario starts from.
type Job struct {
	// Name names the job in reports; it defaults to the Topic.
	Name string
	// Schema is the application's schema. It holds watermill-sql's message
	// tables of the topics the handlers publish to in their own
	// transaction (MessagesTableSQL), as the application's migrations do.
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from (see twice.Job.Seed).
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Topic is the topic the handler consumes (the router's subscribeTopic).
	Topic string
	// Message is the message as the producer publishes it: its UUID, its
	// payload and its metadata. An empty UUID is one made by the check; a
	// duplicate message (a publisher that retried) always has another.
	Message *message.Message
	// Handler returns the handler for one attempt, built on the attempt's
	// handles (a.Pool, a.DB, a.Mailer, a.HTTP...), as the router's
	// AddHandler takes it. The messages it returns are published to
	// PublishTopic with Publisher, as the router publishes them, before the
	// ack. Set Handler or NoPublishHandler.
	Handler func(a *twice.Attempt) message.HandlerFunc
	// NoPublishHandler is Handler for the router's AddNoPublisherHandler.
	NoPublishHandler func(a *twice.Attempt) message.NoPublishHandlerFunc
	// PublishTopic is the router's publishTopic for Handler's messages.
	PublishTopic string
	// Publisher returns the router's publisher of Handler's messages for
	// one attempt; nil is NewPublisher(a), whose messages are effects.
	Publisher func(a *twice.Attempt) message.Publisher
	// Middleware returns the router's middleware for one attempt, the
	// router's first, outermost (router.AddMiddleware's order):
	// middleware.Recoverer, middleware.Retry{...}.Middleware, a
	// middleware.PoisonQueue on a publisher of the attempt (NewPublisher(a),
	// or a watermill-sql publisher on a.Pool). The handlers of Handlers run
	// inside it too.
	Middleware func(a *twice.Attempt) []message.HandlerMiddleware
	// Handlers returns the application's other handlers for one attempt, by
	// the topic they consume. When it is set, the check works the messages
	// the handlers published to watermill-sql's tables (an outbox: a
	// watermill-sql publisher on the handler's transaction), and what those
	// publish, after every scenario, each with the handler of its topic
	// (see twice.WorkFollowUps); then it compares the world. A message of a
	// topic no handler consumes stays in its table, and the report says so.
	// Handlers is also called with an empty *twice.Attempt, to learn the
	// topics: build the handlers there, use the attempt's handles only when
	// they run.
	Handlers func(a *twice.Attempt) map[string]message.NoPublishHandlerFunc
}

// Check checks the handler as watermill runs it on watermill-sql and
// returns the report; it never fails a test. opts are twice's options,
// applied after watermill-sql's semantics.
func Check(ctx context.Context, job Job, opts ...twice.Option) *twice.Report {
	j, qopts := job.Twice()
	return twice.Check(ctx, j, append(qopts, opts...)...)
}

// AssertIdempotent is twice.AssertIdempotent for a watermill handler: it
// stops the test (Fatalf) with the report when the handler breaks a
// promise.
func AssertIdempotent(tb twice.TB, job Job, opts ...twice.Option) {
	tb.Helper()
	j, qopts := job.Twice()
	twice.AssertIdempotent(tb, j, append(qopts, opts...)...)
}

// ExpectIdempotent is AssertIdempotent that lets the test go on (Errorf);
// it reports whether the handler kept every promise.
func ExpectIdempotent(tb twice.TB, job Job, opts ...twice.Option) bool {
	tb.Helper()
	j, qopts := job.Twice()
	return twice.ExpectIdempotent(tb, j, append(qopts, opts...)...)
}

// Twice returns the job as twice sees it and watermill-sql's delivery
// semantics as twice options, for twice.Check, twice.AssertIdempotent or a
// rapid property. The job may be checked any number of times, in parallel
// too.
func (job Job) Twice() (twice.Job, []twice.Option) {
	q := newQueue(job)
	name := job.Name
	if name == "" {
		name = job.Topic
	}
	opts := q.options()
	if err := job.invalid(); err != nil {
		// The check's clean run fails with what to fix.
		return twice.Job{Name: name, Schema: job.Schema, Seed: job.Seed,
			Run: func(context.Context, *twice.Attempt) error { return err }}, opts
	}
	if job.Handlers != nil {
		opts = append(opts, twice.WorkFollowUps(q.pending)) // followups.go
	}
	return twice.Job{Name: name, Schema: job.Schema, Seed: job.Seed, Run: q.run}, opts
}

// invalid says what is missing from the job, or nil.
func (job Job) invalid() error {
	switch {
	case job.Topic == "":
		return errors.New("twicewatermill: the job has no Topic: set Job.Topic to the topic the handler consumes (the router's subscribeTopic)")
	case job.Message == nil:
		return errors.New("twicewatermill: the job has no Message: set Job.Message to message.NewMessage(uuid, payload), the message the producer publishes")
	case job.Handler == nil && job.NoPublishHandler == nil:
		return errors.New("twicewatermill: the job has no handler: set Job.Handler (a message.HandlerFunc) or Job.NoPublishHandler (a message.NoPublishHandlerFunc), built on the attempt's handles")
	case job.Handler != nil && job.NoPublishHandler != nil:
		return errors.New("twicewatermill: the job has both Handler and NoPublishHandler: set one, as the router's AddHandler or AddNoPublisherHandler takes one")
	}
	return nil
}
