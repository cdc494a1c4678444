package checkstate

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/internal/queue"
)

// QueueError records the first error of a queue hook; the check's report
// carries it as Err (a check whose queue bookkeeping failed proves nothing).
func (s *State[A]) QueueError(what string, d queue.Delivery, err error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.QueueErr == nil {
		s.QueueErr = queue.HookError(what, d, err)
	}
}

// HookDelivery is the Delivery of jobID's delivery number to the queue's
// hooks, now.
func (s *State[A]) HookDelivery(jobID string, number int, pool *pgxpool.Pool, err error) func() queue.Delivery {
	return func() queue.Delivery {
		d := queue.Delivery{JobID: jobID, Number: number, Err: err, Pool: pool, Now: s.Now()}
		d.FollowUp, _, _ = s.FollowUpOf(jobID)
		return d
	}
}

// QueueFetch runs the fetch of the queue q before a delivery; it returns
// why the queue would not deliver the job now ("" to deliver it).
func (s *State[A]) QueueFetch(ctx context.Context, q *queue.Config, pool *pgxpool.Pool, jobID string, number int) string {
	return q.BeforeDelivery(ctx, s.DB.Pool(), s.HookDelivery(jobID, number, pool, nil), s.QueueError)
}

// FollowUpOf is the follow-up's key, kind and Run when jobID is one ("" and
// nil for the checked job).
func (s *State[A]) FollowUpOf(jobID string) (key, kind string, run func(ctx context.Context, a *A) error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Follow.Of(jobID)
}

// resetFollowUps forgets the last scenario's follow-ups and notes the
// jobs waiting once the database is seeded (follow says how to list them).
func (s *State[A]) resetFollowUps(ctx context.Context, follow queue.Follow[A]) error {
	st, err := queue.NewState(ctx, follow.Listing(s.DB.Pool()))
	if err != nil {
		return err
	}
	s.Mu.Lock()
	s.Follow = st
	s.Mu.Unlock()
	return nil
}

// MaxDeliveries is how often the queue delivers jobID: a follow-up's own
// limit, or the check's MaxDeliveries.
func (s *State[A]) MaxDeliveries(jobID string) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Follow.MaxDeliveries(jobID, s.Opts.MaxDeliveries)
}
