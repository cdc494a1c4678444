package twiceasynq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// A ledger's worker credits a transfer with a guarded statement, then
// enqueues the transfer's receipt through the app's own *asynq.Client,
// built on RedisClientOpt(a); the receipt's handler emails the customer.

var ledgerSchema = pgfixture.SQL(`
CREATE TABLE credits (ref text PRIMARY KEY, account bigint NOT NULL, amount int NOT NULL);`)

const (
	creditType  = "ledger:credit"
	receiptType = "ledger:receipt"
)

type transfer struct {
	Ref     string `json:"ref"`
	Account int64  `json:"account"`
	Amount  int    `json:"amount"`
}

var transfer9812 = transfer{Ref: "tx-9812", Account: 77, Amount: 50}

func (tr transfer) payload() []byte {
	b, _ := json.Marshal(tr)
	return b
}

// credit is the ledger's handler. Guarded by the credit's key, it
// enqueues the receipt only when the credit is new (onlyNew), or whenever
// the credit exists under the receipt's TaskID, taking
// ErrTaskIDConflict as done.
func credit(pool *pgxpool.Pool, client *asynq.Client, onlyNew bool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		var tr transfer
		if err := json.Unmarshal(t.Payload(), &tr); err != nil {
			return fmt.Errorf("%v: %w", err, asynq.SkipRetry)
		}
		tag, err := pool.Exec(ctx, `INSERT INTO credits (ref, account, amount) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, tr.Ref, tr.Account, tr.Amount)
		if err != nil {
			return err
		}
		if onlyNew && tag.RowsAffected() == 0 {
			return nil // credited before: done
		}
		_, err = client.EnqueueContext(ctx, asynq.NewTask(receiptType, t.Payload()), asynq.TaskID("receipt:"+tr.Ref))
		if errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil // enqueued before
		}
		return err
	}
}

// receipt emails the customer the receipt (at least once).
func receipt(a *twice.Attempt) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		var tr transfer
		if err := json.Unmarshal(t.Payload(), &tr); err != nil {
			return fmt.Errorf("%v: %w", err, asynq.SkipRetry)
		}
		return a.Mailer.Send(ctx, effects.Email{To: fmt.Sprintf("account-%d@example.com", tr.Account), Subject: "Receipt " + tr.Ref,
			Body: fmt.Sprintf("%d credited", tr.Amount)})
	}
}

// ledgerJob is the credit under the check, its receipt worked by the
// app's mux, every enqueue through the app's own asynq.Client on the
// attempt's Redis.
func ledgerJob(onlyNew bool) Job {
	handler := func(a *twice.Attempt) asynq.Handler {
		client := asynq.NewClient(RedisClientOpt(a))
		return credit(a.Pool, client, onlyNew)
	}
	return Job{Schema: ledgerSchema, Task: asynq.NewTask(creditType, transfer9812.payload(), asynq.TaskID("credit:tx-9812")),
		Handler: handler,
		Mux: func(a *twice.Attempt) *asynq.ServeMux {
			mux := asynq.NewServeMux()
			mux.Handle(creditType, asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error { return handler(a).ProcessTask(ctx, t) }))
			mux.Handle(receiptType, receipt(a))
			return mux
		}}
}

// The receipt enqueued only when the credit is new: a crash after the
// credit's commit, before the enqueue, loses the receipt for good (the
// redelivery finds the credit and returns). The check sees the enqueue
// the app's own client made, as a point and an effect, and the receipt
// worked by the mux.
func TestAReceiptEnqueuedOnlyForANewCreditIsLost(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), ledgerJob(true), twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if rep.OK() {
		t.Fatalf("the lost receipt passed:\n%s", rep)
	}
	if got := fmt.Sprint(findings(rep)); got != "[crash@2]" {
		t.Errorf("flagged by %s, want [crash@2] (the credit committed, the enqueue not made):\n%s", got, rep)
	}
	for _, want := range []string{
		`asynq task ledger:receipt "{\"ref\":\"tx-9812\",\"account\":77,\"amount\":50}": want 1, got 0 (exactly-once)`,
		`email account-77@example.com "Receipt tx-9812\n50 credited": want 1, got 0 (at-least-once)`,
	} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, rep)
		}
	}
	var jobs []string
	for _, a := range rep.Reference.Attempts {
		jobs = append(jobs, a.JobID)
	}
	if got := fmt.Sprint(jobs); got != "[job-1 follow-up-1]" {
		t.Errorf("the reference run's attempts are %s, want [job-1 follow-up-1]: the receipt was not worked", got)
	}
	points := rep.Reference.Attempts[0].Points
	if len(points) != 2 || !strings.Contains(points[1].Label, "asynq task ledger:receipt") {
		t.Errorf("the reference run's points are %v, want the INSERT, then the enqueue through the app's client", points)
	}
}

// Enqueued whenever the credit exists, under the receipt's TaskID: the
// redelivery enqueues it again, asynq refuses the copy while the first is
// stored, and every scenario sends the receipt.
func TestAReceiptEnqueuedWheneverTheCreditExistsPasses(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), ledgerJob(false), twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce))
	if rep.Err != nil || !rep.OK() {
		t.Fatalf("want a pass:\n%s", rep)
	}
	// The enqueue's reply lost: the connection closes, go-redis sends the
	// script again, and the task it stored makes asynq answer
	// ErrTaskIDConflict, as a real Redis would.
	lost := scenario(rep, "reply-lost@2")
	if lost == nil {
		t.Fatalf("reply-lost@2 did not play: %v", rep.Tokens())
	}
	a := lost.Attempts[0]
	if len(a.Points) != 3 || !strings.Contains(a.Points[2].Label, "asynq task ledger:receipt") || a.Err != nil {
		t.Errorf("reply-lost@2's attempt reached %v and returned %v, want the INSERT, the enqueue, go-redis's second try of it, and nil (ErrTaskIDConflict taken as done)", a.Points, a.Err)
	}
}

// Two copies of a task run at once, each enqueuing through its own
// client on its attempt's Redis a note that names its job: each note is a
// point of the attempt that enqueued it, in every concurrent scenario.
func TestConcurrentEnqueuesAreTheirAttempts(t *testing.T) {
	t.Parallel()
	rep := Check(t.Context(), Job{Schema: ledgerSchema, Task: asynq.NewTask(creditType, transfer9812.payload()),
		Handler: func(a *twice.Attempt) asynq.Handler {
			client := asynq.NewClient(RedisClientOpt(a))
			return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
				if _, err := a.Pool.Exec(ctx, `SELECT count(*) FROM credits`); err != nil {
					return err
				}
				if _, err := client.EnqueueContext(ctx, asynq.NewTask("note", []byte(a.JobID))); err != nil {
					return err
				}
				_, err := a.Pool.Exec(ctx, `SELECT count(*) FROM credits`)
				return err
			})
		}}, twice.EffectPolicy(EffectKind, effects.AtLeastOnce))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	concurrent := 0
	for _, s := range rep.Scenarios {
		if !strings.HasPrefix(s.Token(), "duplicate-overlap") {
			continue
		}
		concurrent++
		jobs := map[string]bool{}
		for _, a := range s.Attempts {
			jobs[a.JobID] = true
			var notes []string
			for _, p := range a.Points {
				if strings.Contains(p.Label, "asynq task note") {
					notes = append(notes, p.Label)
				}
			}
			if want := fmt.Sprintf(`asynq task note "%s"`, a.JobID); len(notes) != 1 || notes[0] != want {
				t.Errorf("%s: attempt %d of %s enqueued %q, want [%s]", s.Token(), a.Number, a.JobID, notes, want)
			}
		}
		if !jobs["job-1"] || !jobs["job-2"] {
			t.Errorf("%s ran %v, want both copies", s.Token(), jobs)
		}
	}
	if concurrent == 0 {
		t.Fatalf("no concurrent scenario played: %v", rep.Tokens())
	}
}

// Without redis-server on the PATH, the attempts' Redis is the embedded
// miniredis, and the lost receipt is flagged just the same.
func TestTheEmbeddedRedisStandsInForRedisServer(t *testing.T) {
	t.Parallel()
	storeMu.Lock()
	saved, savedLook := theStore, storeLookPath
	theStore = nil
	storeLookPath = func(string) (string, error) { return "", errors.New("not on the PATH") }
	storeMu.Unlock()
	defer func() {
		storeMu.Lock()
		theStore, storeLookPath = saved, savedLook
		storeMu.Unlock()
	}()
	rep := Check(t.Context(), ledgerJob(true), twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if got := fmt.Sprint(findings(rep)); got != "[crash@2]" {
		t.Errorf("flagged by %s, want [crash@2]:\n%s", got, rep)
	}
	storeMu.Lock()
	name := "no store (the check never reached its Redis)"
	if theStore != nil {
		name = theStore.name
	}
	storeMu.Unlock()
	if name != "miniredis (embedded)" {
		t.Errorf("the attempts' Redis is %s, want miniredis (embedded)", name)
	}
}

// An asynq.Inspector on the attempt's Redis sees what the attempt's
// client enqueued there, as asynq stored it; the next scenario starts
// from an empty Redis.
func TestTheInspectorSeesWhatWasEnqueued(t *testing.T) {
	t.Parallel()
	var seen []string
	rep := Check(t.Context(), Job{Schema: ledgerSchema, Task: asynq.NewTask(creditType, transfer9812.payload(), asynq.TaskID("credit:tx-9812")),
		Handler: func(a *twice.Attempt) asynq.Handler {
			client := asynq.NewClient(RedisClientOpt(a))
			inspector := asynq.NewInspector(RedisClientOpt(a))
			return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
				info, err := client.EnqueueContext(ctx, asynq.NewTask(receiptType, t.Payload()), asynq.Queue("critical"), asynq.ProcessIn(time.Hour), asynq.MaxRetry(2))
				if err != nil {
					return err
				}
				got, err := inspector.GetTaskInfo("critical", info.ID)
				if err != nil {
					return err
				}
				all, err := inspector.ListScheduledTasks("critical")
				if err != nil {
					return err
				}
				seen = append(seen, fmt.Sprintf("%s %s %s retry %d of %d", got.Type, got.State, got.Queue, got.MaxRetry, len(all)))
				return nil
			})
		}}, twice.Only("crash@end"))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	want := "[ledger:receipt scheduled critical retry 2 of 1 ledger:receipt scheduled critical retry 2 of 1 ledger:receipt scheduled critical retry 2 of 1 ledger:receipt scheduled critical retry 2 of 2]"
	if got := fmt.Sprint(seen); got != want {
		t.Errorf("the inspector saw %s\nwant (the two clean runs, then crash@end's two deliveries) %s\n%s", got, want, rep)
	}
}

// An attempt twiceasynq is not running gets options whose every command
// fails with what to do.
func TestRedisClientOptOfAForeignAttemptSaysWhatToDo(t *testing.T) {
	t.Parallel()
	client := asynq.NewClient(RedisClientOpt(&twice.Attempt{}))
	defer client.Close()
	_, err := client.Enqueue(asynq.NewTask(receiptType, nil))
	if err == nil || !strings.Contains(err.Error(), "call it in Job.Handler or Job.Mux with the attempt they get") {
		t.Fatalf("the enqueue returned %v, want an error that says to call RedisClientOpt with the attempt Job.Handler or Job.Mux gets", err)
	}
}

// The attempt's Redis answers go-redis as a Redis does: RESP2 after its
// HELLO 3, the app's SELECT on its one database, FLUSHALL on it alone;
// what it does not serve is refused with why.
func TestTheAttemptsRedisServesGoRedis(t *testing.T) {
	t.Parallel()
	var got []string
	rep := Check(t.Context(), Job{Schema: ledgerSchema, Task: asynq.NewTask(creditType, transfer9812.payload()),
		Handler: func(a *twice.Attempt) asynq.Handler {
			return asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
				rc := redis.NewClient(&redis.Options{Addr: RedisClientOpt(a).Addr, DB: 3})
				defer rc.Close()
				say := func(what string, v any, err error) { got = append(got, fmt.Sprintf("%s: %v %v", what, v, err)) }
				say("set", "", rc.Set(ctx, "k", "v", 0).Err())
				v, err := rc.Get(ctx, "k").Result()
				say("get", v, err)
				say("flushall", "", rc.FlushAll(ctx).Err())
				_, err = rc.Get(ctx, "k").Result()
				say("get after flushall", "", err)
				_, err = rc.Do(ctx, "SUBSCRIBE", "news").Result()
				say("subscribe", "", err)
				return nil
			})
		}}, twice.Only("sequential"))
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	want := []string{
		"set:  <nil>",
		"get: v <nil>",
		"flushall:  <nil>",
		"get after flushall:  redis: nil",
		"subscribe:  ERR the attempt's Redis serves asynq's client and inspector: SUBSCRIBE is not served (the check plays asynq's server itself)",
	}
	if len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("go-redis got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
