package twice

import (
	"context"
	"fmt"
	"strings"
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
// its follow-ups) enqueued, as the queue adapter lists it.
type FollowUp struct {
	// Key is the queue's name for the job (River: its river_job id),
	// unique within a scenario. The queue's hooks get it as
	// Delivery.FollowUp.
	Key string
	// Kind is the job's kind, as reports name it ("webhook_retry").
	Kind string
	// After is how long after it was enqueued the queue makes it available
	// (its ScheduledAt less its enqueue time; 0: at once). The check's clock
	// moves on by it before the follow-up runs; nothing sleeps.
	After time.Duration
	// Run works one delivery of the job, as the application's worker for
	// its kind does. Nil when the application registered no worker for the
	// kind: the job stays in the queue, compared as the queue holds it (a
	// row, an effect), and the report says so.
	Run func(ctx context.Context, a *Attempt) error
	// MaxDeliveries bounds how often the queue delivers the follow-up when
	// its attempts fail (its own retry limit, as asynq's MaxRetry + 1);
	// 0 is the check's MaxDeliveries.
	MaxDeliveries int
}

// DefaultFollowUpLimit bounds how many follow-up jobs one scenario works.
const DefaultFollowUpLimit = 20

// followUpConfig is WorkFollowUps's and its companions'.
type followUpConfig struct {
	pending func(ctx context.Context, db *pgxpool.Pool) ([]FollowUp, error)
	limit   int
	before  bool // CompareBeforeFollowUps
}

// WorkFollowUps says the queue works the jobs the checked job enqueues.
// pending lists the jobs waiting in the queue besides the checked job, in
// the order the queue works them, reading the check's own pool. The check
// calls it after the reference run and after every scenario, and again
// after each follow-up it worked. It delivers each follow-up with its Run,
// with no fault, its clock moved on by After. It stops when none is
// waiting or it worked FollowUpLimit of them, then compares the world. A
// follow-up the queue is done with is the queue's to leave out of the
// comparison (ExcludeRows), as a done job is gone from its work. A queue
// adapter sets it from the application's own registration of its workers
// (twiceriver: Job.Workers; twicegue: Job.WorkFollowUps).
func WorkFollowUps(pending func(ctx context.Context, db *pgxpool.Pool) ([]FollowUp, error)) Option {
	return optionFunc(func(c *config) { c.followUps.pending = pending })
}

// FollowUpLimit bounds how many follow-up jobs one scenario works
// (default DefaultFollowUpLimit). The follow-ups past the bound stay rows,
// and the report says so.
func FollowUpLimit(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.followUps.limit = n
		}
	})
}

// CompareBeforeFollowUps compares the world before the queue works the
// follow-ups: the jobs the checked job enqueued are compared as rows, never
// worked (what the check does without WorkFollowUps).
func CompareBeforeFollowUps() Option {
	return optionFunc(func(c *config) { c.followUps.before = true })
}

// followUpState is what the scenario running knows of its follow-ups.
type followUpState struct {
	runs  map[string]func(ctx context.Context, a *Attempt) error // by job ID
	keys  map[string]string                                      // job ID -> FollowUp.Key
	kinds map[string]string                                      // job ID -> FollowUp.Kind
	max   map[string]int                                         // job ID -> FollowUp.MaxDeliveries, when set
	// seeded are the keys of the jobs waiting before the checked job ran
	// (the seed's): not the checked job's follow-ups, never worked.
	seeded map[string]bool
}

// followUpOf is the follow-up's key and Run when jobID is one ("" and nil
// for the checked job).
func (c *checker) followUpOf(jobID string) (key, kind string, run func(ctx context.Context, a *Attempt) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.follow.keys[jobID], c.follow.kinds[jobID], c.follow.runs[jobID]
}

// workFollowUps works the scenario's follow-ups, unless an attempt
// panicked or hung: the pending ones, one after another in the queue's
// order, each delivered until it succeeds or the queue gives up, then the
// ones they enqueued, to the limit.
func (c *checker) workFollowUps(ctx context.Context, sr *ScenarioRun) {
	f := c.cfg.followUps
	if f.pending == nil || f.before {
		return
	}
	for _, p := range sr.Problems {
		if p.Kind != ProblemGaveUp {
			return
		}
	}
	limit := f.limit
	if limit <= 0 {
		limit = DefaultFollowUpLimit
	}
	before := len(sr.Problems)
	defer func() {
		sr.followUpProblems = append([]Problem(nil), sr.Problems[before:]...)
	}()
	c.mu.Lock()
	seeded := c.follow.seeded
	c.mu.Unlock()
	done := map[string]bool{}
	seenAt := map[string]time.Time{}
	worked := 0
	for {
		pending, err := f.pending(ctx, c.db.Pool())
		if err != nil {
			c.queueError("follow-up listing", Delivery{JobID: job1, Number: 1}, err)
			return
		}
		var next *FollowUp
		for i := range pending {
			p := &pending[i]
			if _, ok := seenAt[p.Key]; !ok {
				seenAt[p.Key] = c.now()
			}
			if done[p.Key] || seeded[p.Key] {
				continue
			}
			if p.Run == nil {
				done[p.Key] = true
				sr.followUpsUnworked = appendOnce(sr.followUpsUnworked, p.Kind)
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
			sr.followUpsPastLimit = limit
			return
		}
		worked++
		done[next.Key] = true
		jobID := fmt.Sprintf("follow-up-%d", worked)
		c.mu.Lock()
		if at := seenAt[next.Key].Add(next.After); at.After(c.clock) {
			c.clock = at
		}
		c.follow.runs[jobID], c.follow.keys[jobID], c.follow.kinds[jobID] = next.Run, next.Key, next.Kind
		if next.MaxDeliveries > 0 {
			c.follow.max[jobID] = next.MaxDeliveries
		}
		c.mu.Unlock()
		sr.followUpKinds = append(sr.followUpKinds, jobID+": "+next.Kind)
		if !c.deliver(ctx, sr, jobID, delivery{}) {
			for _, p := range sr.Problems {
				if p.Kind != ProblemGaveUp {
					return
				}
			}
		}
	}
}

// resetFollowUps forgets the last scenario's follow-ups and notes the
// jobs waiting once the database is seeded: those the seed inserted are
// not the checked job's follow-ups.
func (c *checker) resetFollowUps(ctx context.Context) error {
	st := followUpState{runs: map[string]func(context.Context, *Attempt) error{}, keys: map[string]string{}, kinds: map[string]string{}, max: map[string]int{}, seeded: map[string]bool{}}
	if f := c.cfg.followUps; f.pending != nil && !f.before {
		seeded, err := f.pending(ctx, c.db.Pool())
		if err != nil {
			return fmt.Errorf("twice: the queue's follow-up listing failed on the seeded database: %w", err)
		}
		for _, p := range seeded {
			st.seeded[p.Key] = true
		}
	}
	c.mu.Lock()
	c.follow = st
	c.mu.Unlock()
	return nil
}

// maxDeliveries is how often the queue delivers jobID: a follow-up's own
// limit, or the check's MaxDeliveries.
func (c *checker) maxDeliveries(jobID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.follow.max[jobID]; n > 0 {
		return n
	}
	return c.cfg.maxDeliveries
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// followUpsHeadline is what a headline adds when the scenario worked
// follow-ups.
func (sr *ScenarioRun) followUpsHeadline() string {
	if len(sr.followUpKinds) == 0 {
		return ""
	}
	return ", then the follow-ups it enqueued (" + strings.Join(sr.followUpKinds, ", ") + ")"
}

// followUpsNote is the report's note on the follow-ups its scenarios left
// as rows: kinds with no worker, and those past FollowUpLimit.
func (r *Report) followUpsNote() string {
	var kinds []string
	limit := 0
	for _, sr := range append([]*ScenarioRun{r.Reference}, r.Scenarios...) {
		if sr == nil {
			continue
		}
		for _, k := range sr.followUpsUnworked {
			kinds = appendOnce(kinds, k)
		}
		limit = max(limit, sr.followUpsPastLimit)
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
