package twicewatermill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/docsblock"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The differential suite: each case runs the same handlers under the model
// (twice's check, playing one scenario) and on a real watermill router fed
// by watermill-sql's subscriber, its messages published by watermill-sql's
// publisher, on the test's PostgreSQL; then it compares, delivery by
// delivery, what the router did with each message (acked, nacked, never
// acked), and the rows and emails left.

type diffCase struct {
	name string
	// handler is the orders topic's handler, built on a pool.
	handler func(pool *pgxpool.Pool) message.NoPublishHandlerFunc
	// middleware is the router's, built on a publisher of the poison
	// queue (a watermill-sql publisher on the pool, in both engines).
	middleware func(poison message.Publisher) []message.HandlerMiddleware
	// receipts: the receipts topic has its handler (the outbox's follow-up).
	receipts bool
	// token is the scenario the model plays: once, crash@end (the
	// subscriber dies after the handler returned, before its ack: the real
	// one's ack deadline passes) or duplicate-enqueue (the publisher
	// published the message twice, under two UUIDs).
	token string
	// acks is how many acks the real router gives before the case is done.
	acks int
}

func poisonQueue(pub message.Publisher) []message.HandlerMiddleware {
	pq, err := middleware.PoisonQueue(pub, poisonTopic)
	if err != nil {
		panic(err)
	}
	return []message.HandlerMiddleware{pq}
}

func retried(message.Publisher) []message.HandlerMiddleware {
	return []message.HandlerMiddleware{middleware.Recoverer, middleware.Retry{MaxRetries: 3}.Middleware}
}

var diffCases = []diffCase{
	{name: "acked", handler: markAndReward, token: "once", acks: 1},
	{name: "the subscriber dies before the ack, unguarded increment", handler: reward, token: "crash@end", acks: 1},
	{name: "the subscriber dies before the ack, key on the order", handler: markAndReward, token: "crash@end", acks: 1},
	{name: "duplicate message, check then act on the UUID", handler: checkThenAct, token: "duplicate-enqueue", acks: 2},
	{name: "duplicate message, key on the order", handler: markAndReward, token: "duplicate-enqueue", acks: 2},
	{name: "Retry middleware, two failures", handler: func(p *pgxpool.Pool) message.NoPublishHandlerFunc { return failing(p, 2) }, middleware: retried, token: "once", acks: 1},
	{name: "always failing, poison queue", handler: func(p *pgxpool.Pool) message.NoPublishHandlerFunc { return failing(p, 1000) }, middleware: poisonQueue, token: "once", acks: 1},
	{name: "receipt in the outbox, worked by its handler", handler: rewardWithReceipt, receipts: true, token: "once", acks: 2},
	{name: "receipt in the outbox, the subscriber dies before the ack", handler: rewardWithReceipt, receipts: true, token: "crash@end", acks: 2},
}

// outcome is what one engine did with a case.
type outcome struct {
	Deliveries []string // "message 1 acked", in order, the orders topic's first
	Rows       []string // customers, and how many messages each table holds
	Emails     int
}

func (o outcome) String() string {
	return fmt.Sprintf("deliveries %v\nrows %v\nemails %d", o.Deliveries, o.Rows, o.Emails)
}

const diffUUID = "7c1d7a55-0000-4000-8000-000000009812"

func TestModelAgreesWithWatermillSQL(t *testing.T) {
	t.Parallel()
	engines := make([]outcome, len(diffCases))
	ran := 0
	for i, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			ran++
			m := runModel(t, c)
			engines[i] = runWatermill(t, c)
			if m.String() != engines[i].String() {
				t.Errorf("the model and watermill-sql disagree on %q:\nmodel:\n%s\nwatermill-sql:\n%s", c.name, m, engines[i])
			}
		})
	}
	if !t.Failed() && ran == len(diffCases) {
		docsblock.Check(t, "../docs/watermill.md", "twicewatermill:observed", observedTable(engines))
	}
}

// runModel plays the case's scenario under the check.
func runModel(t *testing.T, c diffCase) outcome {
	j := Job{Schema: schema, Seed: seed, Topic: ordersTopic, Message: message.NewMessage(diffUUID, payload(9812)),
		NoPublishHandler: func(a *twice.Attempt) message.NoPublishHandlerFunc { return c.handler(a.Pool) }}
	if c.middleware != nil {
		j.Middleware = func(a *twice.Attempt) []message.HandlerMiddleware { return c.middleware(poisonPublisher(t, a.Pool)) }
	}
	if c.receipts {
		j.Handlers = handlers
	}
	token := c.token
	if token == "once" {
		token = "crash@1" // any scenario: the reference runs before it
	}
	rep := Check(t.Context(), j, twice.Only(token))
	if rep.Err != nil {
		t.Fatalf("the model's check: %v", rep.Err)
	}
	sr := rep.Reference
	for _, s := range rep.Scenarios {
		if s.Scenario.Token() == c.token {
			sr = s
		}
	}
	var o outcome
	var receipts []string
	for _, a := range sr.Attempts {
		if a.NotDelivered {
			continue
		}
		what := "acked"
		switch {
		case a.Crashed:
			what = "never acked"
		case a.Err != nil:
			what = "nacked"
		}
		if n, ok := strings.CutPrefix(a.JobID, "job-"); ok {
			o.Deliveries = append(o.Deliveries, "message "+n+" "+what)
		} else {
			receipts = append(receipts, "receipt "+strings.TrimPrefix(a.JobID, "follow-up-")+" "+what)
		}
	}
	o.Deliveries = append(o.Deliveries, receipts...)
	for _, r := range sr.Snapshot.Rows("customers") {
		o.Rows = append(o.Rows, "customers"+r.String())
	}
	for _, table := range []string{"watermill_" + receiptsTopic, "watermill_" + poisonTopic} {
		o.Rows = append(o.Rows, fmt.Sprintf("%s: %d", table, len(sr.Snapshot.Rows(table))))
	}
	for _, e := range sr.Effects {
		if e.Kind == effects.KindEmail {
			o.Emails++
		}
	}
	return o
}

func poisonPublisher(t testing.TB, pool *pgxpool.Pool) message.Publisher {
	pub, err := wsql.NewPublisher(wsql.BeginnerFromPgx(pool), wsql.PublisherConfig{SchemaAdapter: wsql.DefaultPostgreSQLSchema{}}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// emails is the receipts handler's mailer in the real run.
type emails struct {
	mu   sync.Mutex
	sent int
}

func (e *emails) Send(context.Context, effects.Email) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sent++
	return nil
}

// recorder is the router's outermost middleware in the real run: it logs
// every delivery and what the router then did with it.
type recorder struct {
	mu     sync.Mutex
	uuids  map[string]map[string]int // topic -> UUID -> its number
	log    map[string][]string       // topic -> deliveries
	acks   int
	notify chan struct{}
}

func (r *recorder) middleware(topic string) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			out, err := h(msg)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.uuids[topic] == nil {
				r.uuids[topic] = map[string]int{}
			}
			n, ok := r.uuids[topic][msg.UUID]
			if !ok {
				n = len(r.uuids[topic]) + 1
				r.uuids[topic][msg.UUID] = n
			}
			what := "acked"
			switch {
			case msg.Context().Err() != nil:
				what = "never acked"
			case err != nil:
				what = "nacked"
			default:
				r.acks++
			}
			name := "message"
			if topic == receiptsTopic {
				name = "receipt"
			}
			r.log[topic] = append(r.log[topic], fmt.Sprintf("%s %d %s", name, n, what))
			select {
			case r.notify <- struct{}{}:
			default:
			}
			return out, err
		}
	}
}

// runWatermill runs the case on a real router with watermill-sql's
// subscriber and publisher.
func runWatermill(t *testing.T, c diffCase) outcome {
	ctx := t.Context()
	pool := newDiffDB(ctx, t)
	logger := watermill.NopLogger{}
	ackDeadline := 300 * time.Millisecond
	subscriber := func() message.Subscriber {
		s, err := wsql.NewSubscriber(wsql.BeginnerFromPgx(pool), wsql.SubscriberConfig{
			ConsumerGroup: "app", SchemaAdapter: wsql.DefaultPostgreSQLSchema{}, OffsetsAdapter: wsql.DefaultPostgreSQLOffsetsAdapter{},
			InitializeSchema: true, PollInterval: 10 * time.Millisecond, ResendInterval: 10 * time.Millisecond, RetryInterval: 10 * time.Millisecond,
			AckDeadline: &ackDeadline,
		}, logger)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	publisher, err := wsql.NewPublisher(wsql.BeginnerFromPgx(pool), wsql.PublisherConfig{SchemaAdapter: wsql.DefaultPostgreSQLSchema{}, AutoInitializeSchema: true}, logger)
	if err != nil {
		t.Fatal(err)
	}
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{uuids: map[string]map[string]int{}, log: map[string][]string{}, notify: make(chan struct{}, 1)}
	h := c.handler(pool)
	if c.token == "crash@end" {
		h = stallFirst(h)
	}
	orders := router.AddNoPublisherHandler("orders", ordersTopic, subscriber(), h)
	orders.AddMiddleware(rec.middleware(ordersTopic))
	if c.middleware != nil {
		orders.AddMiddleware(c.middleware(poisonPublisher(t, pool))...)
	}
	mail := &emails{}
	if c.receipts {
		r := router.AddNoPublisherHandler("receipts", receiptsTopic, subscriber(), sendReceipt(mail))
		r.AddMiddleware(rec.middleware(receiptsTopic))
	}
	done := make(chan error, 1)
	go func() { done <- router.Run(context.WithoutCancel(ctx)) }()
	<-router.Running()
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			_ = router.Close()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	defer stop()
	n := 1
	if c.token == "duplicate-enqueue" {
		n = 2
	}
	for i := range n {
		msg := message.NewMessage(diffUUID, payload(9812))
		if i > 0 {
			msg.UUID = watermill.NewUUID() // the publisher's retry: another UUID
		}
		if err := publisher.Publish(ordersTopic, msg); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(30 * time.Second)
	for {
		rec.mu.Lock()
		acks := rec.acks
		rec.mu.Unlock()
		if acks >= c.acks {
			break
		}
		select {
		case <-rec.notify:
		case <-timeout:
			t.Fatalf("watermill did not ack %d deliveries within 30 s: %v", c.acks, rec.log)
		}
	}
	stop() // every delivery ended: nothing runs while the rows are read
	var o outcome
	rec.mu.Lock()
	o.Deliveries = append(rec.log[ordersTopic], rec.log[receiptsTopic]...)
	rec.mu.Unlock()
	var points int
	if err := pool.QueryRow(ctx, `SELECT points FROM customers WHERE id = 77`).Scan(&points); err != nil {
		t.Fatal(err)
	}
	o.Rows = append(o.Rows, fmt.Sprintf("customers(id=77, points=%d)", points))
	for _, table := range []string{"watermill_" + receiptsTopic, "watermill_" + poisonTopic} {
		var count int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&count); err != nil {
			t.Fatal(err)
		}
		o.Rows = append(o.Rows, fmt.Sprintf("%s: %d", table, count))
	}
	mail.mu.Lock()
	o.Emails = mail.sent
	mail.mu.Unlock()
	return o
}

// stallFirst is h whose first delivery, once h returned, never acks: it
// waits for the subscriber's ack deadline, as a subscriber that died
// before its ack (the message is delivered again).
func stallFirst(h message.NoPublishHandlerFunc) message.NoPublishHandlerFunc {
	var once sync.Once
	return func(msg *message.Message) error {
		if err := h(msg); err != nil {
			return err
		}
		first := false
		once.Do(func() { first = true })
		if first {
			<-msg.Context().Done()
			return errors.New("the subscriber died before its ack")
		}
		return nil
	}
}

// newDiffDB is a database of the schema and seed, with a pool of its own.
func newDiffDB(ctx context.Context, t *testing.T) *pgxpool.Pool {
	t.Helper()
	srv, err := pgfixture.Shared(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, release, err := srv.CreateDBReserving(ctx, schema, 8, "the differential suite")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig = db.ConnConfig()
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		release()
		_ = db.Close(context.Background(), false)
	})
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := seed(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return pool
}

// observedTable is the docs' table of what watermill-sql did.
func observedTable(engines []outcome) string {
	var b strings.Builder
	b.WriteString("| case | played as | deliveries | points | receipts, poisoned messages in their tables | emails |\n| --- | --- | --- | --- | --- | --- |\n")
	played := map[string]string{
		"once":              "published once",
		"crash@end":         "the first delivery never acked (the subscriber died after the handler, before its ack)",
		"duplicate-enqueue": "published twice, the copy under another UUID",
	}
	for i, c := range diffCases {
		o := engines[i]
		points := strings.TrimSuffix(strings.TrimPrefix(o.Rows[0], "customers(id=77, points="), ")")
		tables := strings.TrimPrefix(o.Rows[1], "watermill_"+receiptsTopic+": ") + ", " + strings.TrimPrefix(o.Rows[2], "watermill_"+poisonTopic+": ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", c.name, played[c.token], strings.Join(o.Deliveries, ", "), points, tables, o.Emails)
	}
	return b.String()
}
