package twicetemporal

import (
	"context"
	"fmt"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/twice"
)

// attemptState is what the interceptor knows of one attempt.
type attemptState struct {
	q       *queue
	st      *checkState
	a       *twice.Attempt
	details *commonpb.Payloads // the heartbeat details the attempt resumes from

	mu  sync.Mutex
	n   int   // heartbeats recorded
	err error // the first heartbeat the server could not record
}

func (s *attemptState) beats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *attemptState) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// workerInterceptor puts the attempt's interceptors on the activity.
type workerInterceptor struct {
	interceptor.WorkerInterceptorBase
	att *attemptState
}

func (w *workerInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &inbound{att: w.att}
	i.Next = next
	return i
}

type inbound struct {
	interceptor.ActivityInboundInterceptorBase
	att *attemptState
}

func (i *inbound) Init(next interceptor.ActivityOutboundInterceptor) error {
	o := &outbound{att: i.att}
	o.Next = next
	return i.Next.Init(o)
}

// activityCall marks the context the activity function runs under (and
// what it derives from it): GetInfo tells the server's view of the attempt
// to the activity, and the SDK's own view to the SDK's machinery around it.
// The SDK's test environment before v1.40.0 looks the attempt up by the
// ActivityID that GetInfo reports before the activity runs: told the
// workflow's ActivityID, it found no attempt and failed it as canceled.
type activityCall struct{}

// ExecuteActivity runs the activity with its context marked.
func (i *inbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	return i.Next.ExecuteActivity(context.WithValue(ctx, activityCall{}, true), in)
}

// outbound is the activity's view of Temporal: its info as the server would
// give it to this attempt, heartbeats as points, and the details the
// attempt resumes from.
type outbound struct {
	interceptor.ActivityOutboundInterceptorBase
	att *attemptState
}

// GetInfo is the SDK's info with what the server would say of this attempt:
// its number, the workflow and activity IDs, the activity's timeouts. Outside
// the activity function's context (the SDK's machinery) it is the SDK's.
func (o *outbound) GetInfo(ctx context.Context) activity.Info {
	info := o.Next.GetInfo(ctx)
	if ctx.Value(activityCall{}) == nil {
		return info
	}
	act := o.att.q.act
	info.Attempt = int32(o.att.a.Number)
	if act.WorkflowID != "" {
		info.WorkflowExecution.ID = act.WorkflowID
	}
	if o.att.a.JobID == nextRunJobID { // a new workflow, started by the Schedule
		info.WorkflowExecution.ID = scheduledWorkflowID(info.WorkflowExecution.ID, o.att.a.Now())
	}
	if act.Options.ActivityID != "" {
		info.ActivityID = act.Options.ActivityID
	}
	if act.Options.TaskQueue != "" {
		info.TaskQueue = act.Options.TaskQueue
	}
	info.StartToCloseTimeout = act.startToClose()
	info.HeartbeatTimeout = act.Options.HeartbeatTimeout
	info.ScheduleToCloseTimeout = act.Options.ScheduleToCloseTimeout
	return info
}

// RecordHeartbeat is a point ("RecordHeartbeat N", the attempt's Nth): a crash there loses the
// heartbeat with the worker; past it, the details reached the server and a
// retry resumes from them. Then the SDK's own heartbeat runs.
func (o *outbound) RecordHeartbeat(ctx context.Context, details ...any) {
	s := o.att
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if err := faults.Point(ctx, fmt.Sprintf("RecordHeartbeat %d", n)); err != nil {
		return // the worker died: the heartbeat never left it
	}
	var payloads *commonpb.Payloads
	if len(details) > 1 || (len(details) == 1 && details[0] != nil) {
		var err error
		if payloads, err = converter.GetDefaultDataConverter().ToPayloads(details...); err != nil {
			panic(fmt.Sprintf("twicetemporal: the heartbeat's details cannot be encoded: %v", err)) // as the SDK does
		}
	}
	if err := s.q.reached(ctx, s.st, s.a.JobID, s.a.Number, payloads); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = fmt.Errorf("twicetemporal: recording heartbeat %d: %w", n, err)
		}
		s.mu.Unlock()
	}
	o.Next.RecordHeartbeat(ctx, details...)
}

// HasHeartbeatDetails says whether the attempt resumes from a heartbeat.
func (o *outbound) HasHeartbeatDetails(ctx context.Context) bool {
	return o.att.details != nil
}

// GetHeartbeatDetails decodes the details the attempt resumes from, as the
// SDK does with the details the server sent.
func (o *outbound) GetHeartbeatDetails(ctx context.Context, d ...any) error {
	if o.att.details == nil {
		return temporal.ErrNoData
	}
	return converter.GetDefaultDataConverter().FromPayloads(o.att.details, d...)
}
