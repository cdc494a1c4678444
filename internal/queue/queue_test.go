package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

var errSnooze, errEnd = errors.New("snooze"), errors.New("end")

func testConfig() Config {
	return Config{Snooze: func(err error) bool { return err == errSnooze }, Terminal: func(err error) bool { return err == errEnd }}
}

// TestOutcome: what the queue does after an attempt, from its facts.
func TestOutcome(t *testing.T) {
	q := testConfig()
	require.Equal(t, Done, q.Outcome(Attempt{}))
	require.Equal(t, Done, q.Outcome(Attempt{Err: errors.New("x"), Acked: true}))
	require.Equal(t, Redeliver, q.Outcome(Attempt{Crashed: true}))
	require.Equal(t, Done, q.Outcome(Attempt{Crashed: true, CrashedAfterAck: true}))
	require.Equal(t, Later, q.Outcome(Attempt{Err: errSnooze}))
	require.Equal(t, Redeliver, q.Outcome(Attempt{Err: errors.New("x")}))
	require.False(t, q.Snoozed(Attempt{Err: errSnooze, Crashed: true}))
}

// TestDeliverSnoozesDoNotCount: a delivery that snoozes does not count
// towards the limit, until the job snoozed as often as the limit; the
// give-up says the last error.
func TestDeliverSnoozesDoNotCount(t *testing.T) {
	q := testConfig()
	errs := []error{errSnooze, errors.New("boom"), errSnooze, errors.New("boom")}
	var plans []inject.Plan
	ok, gaveUp := q.Deliver("job-1", Plan{}, 2, Deliveries{Run: func(p inject.Plan, crash, lost bool) (Attempt, bool) {
		plans = append(plans, p)
		return Attempt{Err: errs[len(plans)-1], Points: []faults.Step{{Index: 1}}}, false
	}})
	require.False(t, ok)
	require.Equal(t, "job-1 never succeeded: the queue gave up after 2 deliveries; the last time it returned: snooze", gaveUp)
	require.Len(t, plans, 3)
	require.Equal(t, 1, plans[1].Offset, "numbered on after the delivery that snoozed")
}

// TestDeliverStrikesOnce: the fault strikes the first delivery only, and
// the redelivery comes later on the clock.
func TestDeliverStrikesOnce(t *testing.T) {
	var plans []inject.Plan
	var later time.Duration
	ok, gaveUp := testConfig().Deliver("job-1", Plan{Fault: inject.Plan{CrashBefore: 2}, RedriveAfter: time.Hour}, 3, Deliveries{
		Run: func(p inject.Plan, crash, lost bool) (Attempt, bool) {
			plans = append(plans, p)
			return Attempt{Crashed: p.CrashBefore > 0}, false
		},
		Later: func(d time.Duration) { later += d },
	})
	require.True(t, ok)
	require.Empty(t, gaveUp)
	require.Equal(t, []int{2, 0}, []int{plans[0].CrashBefore, plans[1].CrashBefore})
	require.Equal(t, time.Hour, later)
}

// TestSaidAsTheTimelineShows: no redelivery on the timeline, none in the
// headline; the next run and the follow-ups are added.
func TestSaidAsTheTimelineShows(t *testing.T) {
	generic := "crash before point 2, then redelivery"
	acked := []Attempt{{JobID: "job-1", Number: 1, Crashed: true, Acked: true}}
	require.Equal(t, "crash before point 2; its ack had committed in its own transaction, so the queue did not deliver it again",
		Said(generic, acked, "job-1", false, nil, Worked{}))
	next := append(acked, Attempt{JobID: JobNext, Number: 1})
	require.Equal(t, "mine, then the next scheduled run (Periodic), then the follow-ups it enqueued (follow-up-1: email)",
		Said(generic, next, "job-1", false, func(h Happened, _ string) string {
			require.True(t, h.AckCommitted)
			return "mine"
		}, Worked{Kinds: []string{"follow-up-1: email"}}))
}

// TestWorkFollowUps: follow-ups worked in the queue's order, to the limit,
// the seed's left alone, kinds without a worker noted once.
func TestWorkFollowUps(t *testing.T) {
	type attempt struct{}
	run := func(ctx context.Context, a *attempt) error { return nil }
	waiting := []FollowUp[attempt]{{Key: "seed", Kind: "seeded", Run: run}}
	list := func(context.Context) ([]FollowUp[attempt], error) { return waiting, nil }
	st, err := NewState[attempt](context.Background(), list)
	require.NoError(t, err)
	waiting = append(waiting, FollowUp[attempt]{Key: "a", Kind: "email", Run: run, After: time.Minute, MaxDeliveries: 3},
		FollowUp[attempt]{Key: "b", Kind: "fax"}, FollowUp[attempt]{Key: "c", Kind: "email", Run: run})
	var mu sync.Mutex
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := start
	var delivered []string
	var w Worked
	WorkFollowUps(context.Background(), Work[attempt]{List: list, Limit: 1, Mu: &mu, Clock: &clock, State: &st,
		Now: func() time.Time { return start }, Deliver: func(id string) bool { delivered = append(delivered, id); return true },
		GaveUpOnly: func() bool { return true }, Failed: func(err error) { t.Fatal(err) }}, &w)
	require.Equal(t, []string{"follow-up-1"}, delivered)
	require.Equal(t, Worked{Kinds: []string{"follow-up-1: email"}, Unworked: []string{"fax"}, PastLimit: 1}, w)
	require.Equal(t, start.Add(time.Minute), clock)
	key, kind, _ := st.Of("follow-up-1")
	require.Equal(t, []string{"a", "email"}, []string{key, kind})
	require.Equal(t, 3, st.MaxDeliveries("follow-up-1", 5))
	require.Equal(t, 5, st.MaxDeliveries("job-1", 5))
	require.Equal(t, "\nfollow-ups not worked (no worker registered for their kind; compared as the queue holds them): fax"+
		"\nfollow-ups past the first 1 not worked (FollowUpLimit; compared as the queue holds them)", Note([]Worked{w, w}))
}

// TestNextRun: an interval, a schedule, and a schedule with no later time.
func TestNextRun(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.False(t, Schedule{}.On())
	require.Equal(t, t0.Add(time.Hour), Schedule{Every: time.Hour}.NextRun(t0))
	require.Equal(t, t0, Schedule{Next: func(t time.Time) time.Time { return t }}.NextRun(t0))
}

// TestAfterRunFinding: a call after Run outweighs a goroutine still
// running; the sites are sorted, each once.
func TestAfterRunFinding(t *testing.T) {
	_, caught := AfterRunFinding([]Attempt{{}})
	require.False(t, caught)
	text, caught := AfterRunFinding([]Attempt{{AfterRun: []string{stillRunning}, AfterRunSites: []string{"b"}}, {AfterRun: []string{"INSERT"}, AfterRunSites: []string{"a", "b"}}})
	require.True(t, caught)
	require.Equal(t, afterRunText+"\nstarted by a; b", text)
	text, _ = AfterRunFinding([]Attempt{{AfterRun: []string{stillRunning}}})
	require.Equal(t, outlivedText, text)
}

// TestSchedulersWords: the scheduler's words replace the queue's.
func TestSchedulersWords(t *testing.T) {
	require.Equal(t, "the process died before point 2, then the next scheduled run", InProcessScheduler.Words("crash before point 2, then redelivery"))
	require.Equal(t, "x, then redelivery", LeaseQueue.Words("x, then redelivery"))
	require.Empty(t, LeaseQueue.LeaseHint(true, false))
	require.NotEmpty(t, LeaseQueue.LeaseHint(true, true))
}
