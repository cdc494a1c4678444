package twiceriver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// A payout worker whose failed call is retried by a follow-up job it
// schedules 30 s later (InsertTx with ScheduledAt), as a webhook or payment
// worker that records the failure and hands the retry to River does. The
// check works that follow-up with the application's Workers, on its clock.

var payoutSchema = pgfixture.SQL(`
CREATE TABLE payouts (order_id bigint PRIMARY KEY, amount int NOT NULL, status text NOT NULL);`)

var payoutSeed = twice.SeedSQL(`INSERT INTO payouts (order_id, amount, status) VALUES (9812, 1200, 'pending')`)

// PayoutArgs pays out an order.
type PayoutArgs struct {
	OrderID int64 `json:"order_id"`
}

func (PayoutArgs) Kind() string { return "payout" }

func (PayoutArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// PayoutRetryArgs is the follow-up: pay the order out again.
type PayoutRetryArgs struct {
	OrderID int64 `json:"order_id"`
}

func (PayoutRetryArgs) Kind() string { return "payout_retry" }

// payOut posts the payout under key ("" sends none).
func payOut(ctx context.Context, a *twice.Attempt, key string) error {
	form := url.Values{"amount": {"1200"}, "currency": {"usd"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Payments+"/v1/payouts", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("payout: %s %s", resp.Status, body)
	}
	return nil
}

// PayoutWorker pays out under the order's key; when the call fails it
// records the order as retrying and schedules the retry 30 s later, in
// one transaction with the job's completion.
type PayoutWorker struct {
	river.WorkerDefaults[PayoutArgs]
	A *twice.Attempt
}

func (w *PayoutWorker) Work(ctx context.Context, job *river.Job[PayoutArgs]) error {
	payErr := payOut(ctx, w.A, fmt.Sprintf("payout-%d", job.Args.OrderID))
	tx, err := w.A.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	status := "paid"
	if payErr != nil {
		status = "retrying"
		if _, err := river.ClientFromContext[pgx.Tx](ctx).InsertTx(ctx, tx, PayoutRetryArgs(job.Args),
			&river.InsertOpts{ScheduledAt: time.Now().Add(30 * time.Second)}); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE payouts SET status = $2 WHERE order_id = $1`, job.Args.OrderID, status); err != nil {
		return err
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// PayoutRetryWorker pays the order out again and marks it paid. Keyed, it
// sends the payout's own key: the provider replays the first payout. Without
// the key it pays a second time.
type PayoutRetryWorker struct {
	river.WorkerDefaults[PayoutRetryArgs]
	A     *twice.Attempt
	Keyed bool
}

func (w *PayoutRetryWorker) Work(ctx context.Context, job *river.Job[PayoutRetryArgs]) error {
	key := ""
	if w.Keyed {
		key = fmt.Sprintf("payout-%d", job.Args.OrderID)
	}
	if err := payOut(ctx, w.A, key); err != nil {
		return err
	}
	_, err := w.A.Pool.Exec(ctx, `UPDATE payouts SET status = 'paid' WHERE order_id = $1`, job.Args.OrderID)
	return err
}

// payoutJob is the payout worker; workers, when not nil, are the
// application's Workers with the retry worker keyed or not.
func payoutJob(keyedRetry *bool) twiceriver.Job[PayoutArgs] {
	job := twiceriver.Job[PayoutArgs]{
		Schema: payoutSchema, Seed: payoutSeed, Args: PayoutArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[PayoutArgs] { return &PayoutWorker{A: a} },
	}
	if keyedRetry != nil {
		keyed := *keyedRetry
		job.Workers = func(a *twice.Attempt) *river.Workers {
			ws := river.NewWorkers()
			river.AddWorker[PayoutArgs](ws, &PayoutWorker{A: a})
			river.AddWorker[PayoutRetryArgs](ws, &PayoutRetryWorker{A: a, Keyed: keyed})
			return ws
		}
	}
	return job
}

// followUpOptions keep the check short: the follow-up is the subject, not
// the concurrent deliveries.
var followUpOptions = []twice.Option{twice.WithoutConcurrency("the follow-ups are the subject here")}

// The retry the worker schedules for a lost reply pays under the same
// key: once River has worked it the world is the clean run's.
func TestFollowUpRetryingALostReplyPasses(t *testing.T) {
	t.Parallel()
	keyed := true
	rep := check2(t, payoutJob(&keyed), followUpOptions...)
	if !rep.OK() {
		t.Fatal(rep.String())
	}
	var reply *twice.ScenarioRun
	for _, sr := range rep.Scenarios {
		if sr.Token() == "reply-lost@1" {
			reply = sr
		}
	}
	if reply == nil {
		t.Fatalf("no reply-lost@1 scenario: %v", rep.Tokens())
	}
	var ids []string
	for _, a := range reply.Attempts {
		ids = append(ids, a.Name())
	}
	equal(t, "reply-lost@1 attempts", ids, []string{"attempt 1 of job-1", "attempt 1 of follow-up-1"})
}

// Compared before the follow-up runs (today's check, or without Workers),
// the same worker is flagged on reply-lost: the order is still retrying.
func TestFollowUpComparedBeforeItRunsIsFlagged(t *testing.T) {
	t.Parallel()
	keyed := true
	for name, job := range map[string]twiceriver.Job[PayoutArgs]{"before": payoutJob(&keyed), "no workers": payoutJob(nil)} {
		opts := append(followUpOptions[:len(followUpOptions):len(followUpOptions)], twice.Only("reply-lost@1"))
		if name == "before" {
			opts = append(opts, twice.CompareBeforeFollowUps())
		}
		rep := check2(t, job, opts...)
		equal(t, name+" findings", findings(rep), []string{"reply-lost@1"})
	}
	// Workers without the retry's worker: the follow-up stays a row, and
	// the report says so.
	job := payoutJob(nil)
	job.Workers = func(a *twice.Attempt) *river.Workers {
		ws := river.NewWorkers()
		river.AddWorker[PayoutArgs](ws, &PayoutWorker{A: a})
		return ws
	}
	rep := check2(t, job, append(followUpOptions[:len(followUpOptions):len(followUpOptions)], twice.Only("reply-lost@1"))...)
	equal(t, "unregistered findings", findings(rep), []string{"reply-lost@1"})
	if want := "\nfollow-ups not worked (no worker registered for their kind; compared as the queue holds them): payout_retry"; !strings.Contains(rep.String(), want) {
		t.Errorf("the report does not say%s:\n%s", want, rep)
	}
}

// A retry without the key pays the order a second time: flagged, and the
// headline and the timeline name the follow-up.
func TestFollowUpPayingTwiceIsFlagged(t *testing.T) {
	t.Parallel()
	keyed := false
	rep := check2(t, payoutJob(&keyed), followUpOptions...)
	equal(t, "findings", findings(rep), []string{"reply-lost@1"})
	f := rep.Findings[0]
	equal(t, "headline", f.Headline, "not idempotent: reply lost at point 1 of 5 (payment POST /v1/payouts (Idempotency-Key payout-9812)): applied, but the job saw a timeout, then the follow-ups it enqueued (follow-up-1: payout_retry)")
	equal(t, "timeline", f.Timeline, `timeline:
  attempt 1 of job-1:
      1  payment POST /v1/payouts (Idempotency-Key payout-9812)
      2  begin
      3  River's insert of payout_retry (client.Insert or InsertTx)
      4  UPDATE payouts SET status = $2 WHERE order_id = $1
      5  river.JobCompleteTx (the job's completion)
      6  commit
         done
  attempt 1 of follow-up-1 (payout_retry):
      1  payment POST /v1/payouts (no Idempotency-Key)
      2  UPDATE payouts SET status = 'paid' WHERE order_id = $1
         done
`)
	equal(t, "effects", fmt.Sprint(f.Effects), `[payment "{\"amount\":1200,\"currency\":\"usd\"}": want 1, got 2 (exactly-once)]`)
	again := check2(t, payoutJob(&keyed), append(followUpOptions[:len(followUpOptions):len(followUpOptions)], twice.Only("reply-lost@1"))...)
	if g := again.Findings[0]; g.Headline != f.Headline || g.Timeline != f.Timeline || fmt.Sprint(g.Effects) != fmt.Sprint(f.Effects) {
		t.Errorf("the same scenario twice gave two findings:\n%s\n\n%s", rep, again)
	}
}

func check2[T river.JobArgs](t *testing.T, job twiceriver.Job[T], opts ...twice.Option) *twice.Report {
	t.Helper()
	rep := twiceriver.Check(t.Context(), job, opts...)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	return rep
}

// Workers is the application's bundle: the retry the worker schedules for
// a lost reply is worked by River with it, 30 s later on the check's
// clock, and the world is compared once it ran.
func ExampleJob_workers() {
	rep := twiceriver.Check(context.Background(), twiceriver.Job[PayoutArgs]{
		Schema: payoutSchema, Seed: payoutSeed, Args: PayoutArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[PayoutArgs] { return &PayoutWorker{A: a} },
		Workers: func(a *twice.Attempt) *river.Workers {
			ws := river.NewWorkers()
			river.AddWorker[PayoutArgs](ws, &PayoutWorker{A: a})
			river.AddWorker[PayoutRetryArgs](ws, &PayoutRetryWorker{A: a, Keyed: true})
			return ws
		},
	}, twice.Only("reply-lost@1"))
	fmt.Println(rep.OK(), rep.Scenarios[0].Attempts[1].Name())
	// Output: true attempt 1 of follow-up-1
}
