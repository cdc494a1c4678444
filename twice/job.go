package twice

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/pgfixture"
)

// Job is a background job under test: its schema, the data every scenario
// starts from, and the function a queue worker would call for one delivery.
type Job struct {
	// Name names the job in reports; it defaults to "job".
	Name string
	// Schema is the job's database schema (migrations).
	Schema pgfixture.Schema
	// Seed inserts the data every scenario starts from, in one transaction on
	// a database in the migrated state. It runs once per check: every
	// scenario starts from the rows it inserted, whatever it drew at random.
	// Nil: the migrated state as it is.
	Seed func(ctx context.Context, tx pgx.Tx) error
	// Run is one delivery of the job. Every statement and effect call must
	// use ctx and the handles of the Attempt: that is how the check sees its
	// points. A non-nil error asks the queue to deliver the job again.
	Run func(ctx context.Context, a *Attempt) error
}

// SeedSQL returns a Seed that runs each statement in order.
func SeedSQL(statements ...string) func(ctx context.Context, tx pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		for i, s := range statements {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("seed statement %d: %w", i+1, err)
			}
		}
		return nil
	}
}

// Attempt is one delivery of one job, with everything the job may touch.
// Jobs must use these handles. A statement or effect call on them belongs
// to the attempt its context carries. A call that carries no attempt's
// context (context.Background(), database/sql's context-free methods, a
// request made with http.NewRequest) belongs to the attempt running on
// these handles, and is a point of it like any other. A call with the
// context of an attempt that returned is refused (faults.ErrFinished). A
// call made while no attempt runs on the handles is refused and reported
// ([ProblemForeignContext]). A connection the job opens on its own to the
// check's database is reported ([ProblemForeignSession]). A pool built with
// pgxpool.NewWithConfig(ctx, a.Pool.Config()) is not the job's own: the
// check sees it. An effect of another kind (an SMS, a published message)
// goes through [Attempt.Effect].
type Attempt struct {
	// JobID is the queue's ID of the job. Redeliveries keep it; a producer
	// that enqueued the same payload twice gives the copy another ID.
	JobID string
	// Number counts the deliveries of this job ID, from 1.
	Number int
	// Pool is a pgx pool on the check's database. Its Config().ConnString()
	// names that database; a pool built from its Config() keeps the check's
	// instrumentation, one opened from the connection string does not.
	Pool *pgxpool.Pool
	// DB is a *sql.DB on the same database (pgx's database/sql driver).
	DB *sql.DB
	// Mailer sends email; it deduplicates nothing, as email providers do.
	Mailer *effects.Mailer
	// Webhooks posts webhooks to a sink without deduplication.
	Webhooks *effects.WebhookSink
	// HTTP is an *http.Client whose requests are points of the attempt. It
	// routes by host: Payments to the payment provider, other hosts to the
	// fakes mounted with HTTPHost. A request to any other host fails with an
	// error that names it; a check never reaches the network.
	HTTP *http.Client
	// Payments is the base URL of a fake payment provider in Stripe's
	// dialect, http://payments.twice.test (effects.ProviderURL). HTTP routes
	// it to the fake; the name keeps the loopback port out of reports. It
	// serves POST to any /v1/... path, with JSON or form-encoded bodies, so
	// stripe-go works with this URL as its backend and HTTP as its client.
	// Its Idempotency-Key semantics are Stripe's, with keys remembered for
	// 24h on the check's clock. effects.Provider documents the rest.
	Payments string
	// SMTP is the host:port of an SMTP server the check owns for this
	// attempt's worker (plain SMTP on 127.0.0.1, AUTH PLAIN with any
	// credentials, no TLS): point the app's mailer there (net/smtp.SendMail,
	// a mail library, the app's own client built from a host and port). A
	// message sent there is one point of the attempt, at its DATA, and an
	// email effect per recipient exactly like a.Mailer's (Kind "email", Key
	// the recipient, Payload the subject, plus "\n" and the body when there
	// is one), compared under EffectPolicy("email", …). The sender is on the
	// point's label, not in the Key or the Payload, so a.Mailer's emails
	// (which have none) and the server's compare alike. A crash before the
	// DATA answers with an SMTP error and sends nothing; after it was
	// accepted (crash-after@N, reply-lost@N) the connection closes without
	// the 250.
	SMTP string

	clock    func() time.Time
	recorder *effects.Recorder
	fakes    *fakeserve.Worker // its worker's fakes (fakeserver.go, internal/fakeserve)

	throughDefault http.RoundTripper // the attempt's requests through http.DefaultTransport: default_transport.go
	baseURLs       *baseURLs         // the servers of BaseURL: baseurl.go
}

// Now is the time on the check's clock: a fixed start that only moves when a
// scenario says so (a late redrive). Jobs that need the time should read it
// here, so every scenario sees the same times.
func (a *Attempt) Now() time.Time { return a.clock() }
