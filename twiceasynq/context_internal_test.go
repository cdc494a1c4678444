package twiceasynq

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// TestTaskContextCarriesAsynqMetadata pins the route to asynq's handler
// context (see context.go): it fails when an asynq upgrade changes what
// GetTaskID, GetRetryCount, GetMaxRetry or GetQueueName read from a
// context that asynq's own functions built.
func TestTaskContextCarriesAsynqMetadata(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx, cancel, err := taskContext(context.Background(), taskMetadata{
		ID: "order-9812", Type: "reward:order", Queue: "critical", MaxRetry: 7, RetryCount: 3, Deadline: deadline,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	id, ok := asynq.GetTaskID(ctx)
	if id != "order-9812" || !ok {
		t.Errorf("GetTaskID = %q, %v; want order-9812, true", id, ok)
	}
	n, ok := asynq.GetRetryCount(ctx)
	if n != 3 || !ok {
		t.Errorf("GetRetryCount = %d, %v; want 3, true", n, ok)
	}
	n, ok = asynq.GetMaxRetry(ctx)
	if n != 7 || !ok {
		t.Errorf("GetMaxRetry = %d, %v; want 7, true", n, ok)
	}
	q, ok := asynq.GetQueueName(ctx)
	if q != "critical" || !ok {
		t.Errorf("GetQueueName = %q, %v; want critical, true", q, ok)
	}
	if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline = %v, %v; want %v, true", d, ok, deadline)
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("the context's cancel does not cancel it")
	}
}
