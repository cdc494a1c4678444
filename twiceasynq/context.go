package twiceasynq

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// asynq offers no supported way to build the context its server gives a
// handler (hibiken/asynq#446): GetTaskID, GetRetryCount, GetMaxRetry and
// GetQueueName read an unexported value that only asynq's processor puts
// there, with internal/context.New. The least fragile route found is to
// call that very function, with a task message that asynq's own decoder
// (internal/base.DecodeMessage) builds from asynq's wire format: the
// protobuf that asynq stores in Redis, which it cannot change without
// breaking the tasks already stored. Only two function signatures are
// relied on; TestTaskContextCarriesAsynqMetadata fails if an asynq upgrade
// breaks either, and go.mod pins the version it was checked against.

//go:linkname asynqDecodeMessage github.com/hibiken/asynq/internal/base.DecodeMessage
func asynqDecodeMessage(data []byte) (msg unsafe.Pointer, err error)

//go:linkname asynqNewContext github.com/hibiken/asynq/internal/context.New
func asynqNewContext(base context.Context, msg unsafe.Pointer, deadline time.Time) (context.Context, context.CancelFunc)

// taskMetadata is what asynq's processor puts in a handler's context.
type taskMetadata struct {
	ID         string
	Type       string
	Queue      string
	MaxRetry   int
	RetryCount int
	Deadline   time.Time
}

// taskContext returns ctx carrying m as asynq's processor carries it: the
// task's ID, retry count, max retry and queue name (read by asynq.GetTaskID
// and its siblings) and the task's deadline.
func taskContext(ctx context.Context, m taskMetadata) (context.Context, context.CancelFunc, error) {
	// asynq's TaskMessage: type = 1, id = 3, queue = 4, retry = 5,
	// retried = 6 (internal/proto/asynq.proto).
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, m.Type)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, m.ID)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, m.Queue)
	b = protowire.AppendTag(b, 5, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int32(m.MaxRetry)))
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int32(m.RetryCount)))
	msg, err := asynqDecodeMessage(b)
	if err != nil {
		return nil, nil, err
	}
	if msg == nil {
		return nil, nil, errors.New("asynq's DecodeMessage returned no message")
	}
	c, cancel := asynqNewContext(ctx, msg, m.Deadline)
	return c, cancel, nil
}
