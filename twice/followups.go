package twice

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/queue"
)

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
	return optionFunc(func(c *config) {
		c.followUps.Pending = nil
		if pending != nil {
			c.followUps.Pending = func(ctx context.Context, db *pgxpool.Pool) ([]queue.FollowUp[Attempt], error) {
				p, err := pending(ctx, db)
				out := make([]queue.FollowUp[Attempt], len(p))
				for i, f := range p {
					out[i] = queue.FollowUp[Attempt](f)
				}
				return out, err
			}
		}
	})
}

// FollowUpLimit bounds how many follow-up jobs one scenario works
// (default DefaultFollowUpLimit). The follow-ups past the bound stay rows,
// and the report says so.
func FollowUpLimit(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.followUps.Limit = n
		}
	})
}

// CompareBeforeFollowUps compares the world before the queue works the
// follow-ups: the jobs the checked job enqueued are compared as rows, never
// worked (what the check does without WorkFollowUps).
func CompareBeforeFollowUps() Option {
	return optionFunc(func(c *config) { c.followUps.Before = true })
}

// workFollowUps works the scenario's follow-ups (internal/queue), unless
// an attempt panicked or hung.
func (c *checker) workFollowUps(ctx context.Context, sr *ScenarioRun) {
	list := c.cfg.followUps.Listing(c.DB.Pool())
	if list == nil || !gaveUpOnly(sr) {
		return
	}
	before := len(sr.Problems)
	defer func() {
		sr.followUpProblems = append([]Problem(nil), sr.Problems[before:]...)
	}()
	queue.WorkFollowUps(ctx, queue.Work[Attempt]{List: list, Limit: c.cfg.followUps.Limit,
		Mu: &c.Mu, Clock: &c.Clock, State: &c.Follow, Now: c.Now,
		Deliver:    func(jobID string) bool { return c.deliver(ctx, sr, jobID, delivery{}) },
		GaveUpOnly: func() bool { return gaveUpOnly(sr) },
		Failed:     func(err error) { c.QueueError("follow-up listing", queue.Delivery{JobID: job1, Number: 1}, err) },
	}, &sr.followUps)
}

// gaveUpOnly reports whether the queue giving up is sr's only problem.
func gaveUpOnly(sr *ScenarioRun) bool {
	for _, p := range sr.Problems {
		if p.Kind != ProblemGaveUp {
			return false
		}
	}
	return true
}

// followUpsNote is the report's note on the follow-ups its scenarios left
// as rows (internal/queue).
func (r *Report) followUpsNote() string {
	var runs []queue.Worked
	for _, sr := range append([]*ScenarioRun{r.Reference}, r.Scenarios...) {
		if sr != nil {
			runs = append(runs, sr.followUps)
		}
	}
	return queue.Note(runs)
}
