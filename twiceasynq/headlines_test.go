package twiceasynq_test

import (
	"context"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/twicekit/twicekit/internal/headlinecheck"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceasynq"
)

// TestHeadlinesAgreeWithTheirTimelines: every headline of a flagged asynq
// handler, with retries and with none (MaxRetry 0), says what its timeline
// shows.
func TestHeadlinesAgreeWithTheirTimelines(t *testing.T) {
	t.Parallel()
	for _, task := range []*asynq.Task{
		asynq.NewTask("reward:order", []byte(`{"order_id":9812}`)),
		asynq.NewTask("reward:order", []byte(`{"order_id":9812}`), asynq.MaxRetry(0)),
	} {
		rep := twiceasynq.Check(context.Background(), twiceasynq.Job{Schema: schema, Seed: seed, Task: task,
			Handler: func(a *twice.Attempt) asynq.Handler { return addPoints(a.Pool, false) }})
		if rep.Err != nil || rep.OK() {
			t.Fatalf("an unguarded increment passed or failed to run:\n%s", rep)
		}
		headlinecheck.Agree(t, rep)
	}
}
