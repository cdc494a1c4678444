package queue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Follow-ups: a job that enqueues more jobs (a webhook delivery that,
// failing, schedules its retry 30 s later) has not done its work until the
// queue has worked them. With WorkFollowUps, after the reference run and
// after every scenario the check works every job the checked job enqueued,
// and what those enqueue, as the queue does, then compares the world at
// rest. The scenario's fault strikes the checked job only. The follow-ups
// are delivered as the queue delivers any job: again after an error, up to
// MaxDeliveries.

// FollowUp is a job waiting in the queue that the checked job (or one of
// its follow-ups) enqueued: twice's FollowUp, field for field, A the
// attempt its Run gets.
type FollowUp[A any] struct {
	Key           string
	Kind          string
	After         time.Duration
	Run           func(ctx context.Context, a *A) error
	MaxDeliveries int
}

// DefaultLimit bounds how many follow-up jobs one scenario works (twice's
// DefaultFollowUpLimit).
const DefaultLimit = 20

// Listing lists the jobs waiting in the queue besides the checked job, in
// the order the queue works them (WorkFollowUps's pending); nil when the
// check does not work the follow-ups.
type Listing[A any] func(ctx context.Context) ([]FollowUp[A], error)

// Follow is what WorkFollowUps and its companions say: Pending lists the
// jobs waiting (twice's pending, its FollowUps converted), Limit bounds how
// many one scenario works (FollowUpLimit), Before compares the world before
// they run (CompareBeforeFollowUps).
type Follow[A any] struct {
	Pending func(ctx context.Context, db *pgxpool.Pool) ([]FollowUp[A], error)
	Limit   int
	Before  bool
}

// Listing is Pending on db (nil when the check does not work the
// follow-ups).
func (f Follow[A]) Listing(db *pgxpool.Pool) Listing[A] {
	if f.Pending == nil || f.Before {
		return nil
	}
	return func(ctx context.Context) ([]FollowUp[A], error) { return f.Pending(ctx, db) }
}

// State is what the scenario running knows of its follow-ups. Its
// methods are called under the checker's lock.
type State[A any] struct {
	runs  map[string]func(context.Context, *A) error // by job ID
	keys  map[string]string                          // job ID -> FollowUp.Key
	kinds map[string]string                          // job ID -> FollowUp.Kind
	max   map[string]int                             // job ID -> FollowUp.MaxDeliveries, when set
	// seeded are the keys of the jobs waiting before the checked job ran
	// (the seed's): not the checked job's follow-ups, never worked.
	seeded map[string]bool
}

// NewState is a scenario's state before its follow-ups: it notes the jobs
// waiting once the database is seeded, since those the seed inserted are
// not the checked job's follow-ups.
func NewState[A any](ctx context.Context, list Listing[A]) (State[A], error) {
	st := State[A]{runs: map[string]func(context.Context, *A) error{}, keys: map[string]string{}, kinds: map[string]string{}, max: map[string]int{}, seeded: map[string]bool{}}
	if list != nil {
		seeded, err := list(ctx)
		if err != nil {
			return State[A]{}, fmt.Errorf("twice: the queue's follow-up listing failed on the seeded database: %w", err)
		}
		for _, p := range seeded {
			st.seeded[p.Key] = true
		}
	}
	return st, nil
}

// Of is the follow-up's key, kind and Run when jobID is one ("", "" and
// nil for the checked job).
func (st State[A]) Of(jobID string) (key, kind string, run func(ctx context.Context, a *A) error) {
	return st.keys[jobID], st.kinds[jobID], st.runs[jobID]
}

// MaxDeliveries is how often the queue delivers jobID: a follow-up's own
// limit, or the check's (max).
func (st State[A]) MaxDeliveries(jobID string, max int) int {
	if n := st.max[jobID]; n > 0 {
		return n
	}
	return max
}

// Worked is what a scenario did with its follow-ups: those it worked
// ("follow-up-1: kind"), the kinds it left as rows for want of a worker,
// and the limit it stopped at.
type Worked struct {
	Kinds     []string
	Unworked  []string
	PastLimit int
}

// Work is what working a scenario's follow-ups needs of the checker.
type Work[A any] struct {
	List  Listing[A]
	Limit int // FollowUpLimit (0: DefaultLimit)
	// Mu guards Clock, the check's clock, and State.
	Mu    sync.Locker
	Clock *time.Time
	State *State[A]
	// Now is the check's clock; Deliver delivers a job ID as the queue
	// does, and reports whether it ended acknowledged; GaveUpOnly reports
	// whether the queue giving up is the scenario's only problem so far.
	Now        func() time.Time
	Deliver    func(jobID string) bool
	GaveUpOnly func() bool
	Failed     func(err error) // the listing's error
}

// WorkFollowUps works the scenario's follow-ups: the pending ones, one
// after another in the queue's order, each delivered until it succeeds or
// the queue gives up, then the ones they enqueued, to the limit. It records
// what it did in sr.
func WorkFollowUps[A any](ctx context.Context, w Work[A], sr *Worked) {
	limit := w.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	w.Mu.Lock()
	seeded := w.State.seeded
	w.Mu.Unlock()
	done := map[string]bool{}
	seenAt := map[string]time.Time{}
	worked := 0
	for {
		pending, err := w.List(ctx)
		if err != nil {
			w.Failed(err)
			return
		}
		var next *FollowUp[A]
		for i := range pending {
			p := &pending[i]
			if _, ok := seenAt[p.Key]; !ok {
				seenAt[p.Key] = w.Now()
			}
			if done[p.Key] || seeded[p.Key] {
				continue
			}
			if p.Run == nil {
				done[p.Key] = true
				sr.Unworked = appendOnce(sr.Unworked, p.Kind)
				continue
			}
			if next == nil {
				next = p
			}
		}
		if next == nil {
			return
		}
		if worked == limit {
			sr.PastLimit = limit
			return
		}
		worked++
		done[next.Key] = true
		jobID := fmt.Sprintf("follow-up-%d", worked)
		w.Mu.Lock()
		if at := seenAt[next.Key].Add(next.After); at.After(*w.Clock) {
			*w.Clock = at
		}
		w.State.runs[jobID], w.State.keys[jobID], w.State.kinds[jobID] = next.Run, next.Key, next.Kind
		if next.MaxDeliveries > 0 {
			w.State.max[jobID] = next.MaxDeliveries
		}
		w.Mu.Unlock()
		sr.Kinds = append(sr.Kinds, jobID+": "+next.Kind)
		if !w.Deliver(jobID) && !w.GaveUpOnly() {
			return
		}
	}
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// Headline is what a headline adds when the scenario worked follow-ups.
func (w Worked) Headline() string {
	if len(w.Kinds) == 0 {
		return ""
	}
	return ", then the follow-ups it enqueued (" + strings.Join(w.Kinds, ", ") + ")"
}

// Note is the report's note on the follow-ups its scenarios left as
// rows: kinds with no worker, and those past FollowUpLimit.
func Note(runs []Worked) string {
	var kinds []string
	limit := 0
	for _, w := range runs {
		for _, k := range w.Unworked {
			kinds = appendOnce(kinds, k)
		}
		limit = max(limit, w.PastLimit)
	}
	s := ""
	if len(kinds) > 0 {
		s += "\nfollow-ups not worked (no worker registered for their kind; compared as the queue holds them): " + strings.Join(kinds, ", ")
	}
	if limit > 0 {
		s += fmt.Sprintf("\nfollow-ups past the first %d not worked (FollowUpLimit; compared as the queue holds them)", limit)
	}
	return s
}
