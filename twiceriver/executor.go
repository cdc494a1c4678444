package twiceriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// River's executor (river/internal/jobexecutor), as the check plays it for
// one delivery: the worker's middleware outermost, then the config's
// worker middleware, then the WorkBegin hooks, the args decoded, the
// timeout, Work, the WorkEnd hooks; a panic anywhere in it is recovered and
// becomes a failed attempt.

// PanicError is a panic in Work (or its middleware or hooks) that River's
// executor recovered: River records it as the attempt's error and retries
// the job as it would after an error.
type PanicError struct {
	// Value is the panic's value; River stores it as the attempt's error.
	Value any
	// Line is the worker's line that panicked ("workers_test.go:120").
	Line string
	// Trace is the stack River stores with the attempt's error.
	Trace string
}

func (e *PanicError) Error() string {
	if e.Line == "" {
		return fmt.Sprintf("panic: %v (River recovered it: a failed attempt)", e.Value)
	}
	return fmt.Sprintf("panic: %v at %s (River recovered it: a failed attempt)", e.Value, e.Line)
}

// execute runs one delivery of job as River's executor does and returns
// what Work returned, or the recovered panic as a *PanicError.
func (q *queue[T]) execute(ctx context.Context, w river.Worker[T], row *rivertype.JobRow) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		}
	}()
	inner := func(ctx context.Context) error {
		for _, h := range q.hooks() {
			if b, ok := h.(rivertype.HookWorkBegin); ok {
				if err := b.WorkBegin(ctx, row); err != nil {
					return err
				}
			}
		}
		job := &river.Job[T]{JobRow: row}
		if err := json.Unmarshal(row.EncodedArgs, &job.Args); err != nil {
			return fmt.Errorf("twiceriver: decoding the job's args: %w", err)
		}
		timeout := w.Timeout(job)
		if timeout == 0 {
			timeout = q.cfg.JobTimeout
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		err := w.Work(ctx, job)
		for _, h := range q.hooks() {
			if e, ok := h.(rivertype.HookWorkEnd); ok {
				err = e.WorkEnd(ctx, row, err)
			}
		}
		return err
	}
	// River wraps the config's middleware first (the first outermost), then
	// the worker's around them.
	for _, m := range slices.Backward(q.middleware()) {
		next := inner
		inner = func(ctx context.Context) error { return m.Work(ctx, row, next) }
	}
	for _, m := range slices.Backward(w.Middleware(row)) {
		next := inner
		inner = func(ctx context.Context) error { return m.Work(ctx, row, next) }
	}
	return inner(ctx)
}

// hooks are the config's hooks, then the args' own (river.JobArgsWithHooks).
func (q *queue[T]) hooks() []rivertype.Hook {
	h := slices.Clone(q.cfg.Hooks)
	if a, ok := any(q.job.Args).(river.JobArgsWithHooks); ok {
		h = append(h, a.Hooks()...)
	}
	return h
}

// middleware is the config's worker middleware: the entries of Middleware
// that are rivertype.WorkerMiddleware, then the older WorkerMiddleware.
func (q *queue[T]) middleware() []rivertype.WorkerMiddleware {
	cfg := q.job.config()
	var m []rivertype.WorkerMiddleware
	for _, x := range cfg.Middleware {
		if w, ok := x.(rivertype.WorkerMiddleware); ok {
			m = append(m, w)
		}
	}
	return append(m, cfg.WorkerMiddleware...) //nolint:staticcheck // River still runs it
}

// recovered turns a recovered panic into the attempt's error, with the
// worker's line that panicked.
func recovered(v any) *PanicError {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var trace strings.Builder
	line := ""
	for {
		f, more := frames.Next()
		fmt.Fprintf(&trace, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if line == "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.Contains(f.Function, "twicekit/twiceriver.") {
			line = fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
		}
		if !more {
			break
		}
	}
	if e, ok := v.(error); ok && errors.Is(e, context.Canceled) {
		line = "" // a crash's cancellation, not the worker's line
	}
	return &PanicError{Value: v, Line: line, Trace: trace.String()}
}
