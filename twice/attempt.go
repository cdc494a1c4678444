package twice

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/twicekit/twicekit/faults"
)

// attemptRecord is what the check saw of one attempt.
type attemptRecord struct {
	JobID   string
	Number  int
	Steps   []faults.Step
	Crashed bool
	CrashAt faults.Step // Index 0: between points
	Reason  string
	Err     error
	Panic   string // the panic value and cleaned stack
	Hung    bool
	Leaked  bool // the job did not return even after its context was cancelled
	AckLost bool // crashed after returning, before the ack
}

type attemptKey struct{}

// origin of the effect calls made with ctx.
func attemptOf(ctx context.Context) *Attempt {
	a, _ := ctx.Value(attemptKey{}).(*Attempt)
	return a
}

// graceAfterCancel is how long a hung attempt gets to return once its context
// is cancelled and its connections cut, before it is left behind.
const graceAfterCancel = 2 * time.Second

// runAttempt runs one delivery of the job on the check's worker.
func (c *checker) runAttempt(ctx context.Context, jobID string, number int, plan faults.Plan, ackLost bool) attemptRecord {
	name := fmt.Sprintf("attempt %d of %s", number, jobID)
	rctx, run := faults.Start(ctx, name, plan)
	run.OnCrash(c.worker.Cut)
	a := &Attempt{
		JobID:    jobID,
		Number:   number,
		Pool:     c.worker.Pool,
		DB:       c.worker.DB,
		Mailer:   c.mailer,
		Webhooks: c.webhooks,
		clock:    c.now,
	}
	rctx = context.WithValue(rctx, attemptKey{}, a)

	type result struct {
		err   error
		panic string
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: fmt.Sprintf("panic: %v\n%s", p, cleanStack(string(debug.Stack())))}
			}
		}()
		done <- result{err: c.job.Run(rctx, a)}
	}()

	rec := attemptRecord{JobID: jobID, Number: number}
	timer := time.NewTimer(c.cfg.attemptTimeout)
	var res result
	select {
	case res = <-done:
		timer.Stop()
	case <-timer.C:
		rec.Hung = true
		run.Crash(fmt.Sprintf("hung for %s", c.cfg.attemptTimeout))
		grace := time.NewTimer(graceAfterCancel)
		select {
		case res = <-done:
			grace.Stop()
		case <-grace.C:
			rec.Leaked = true
		}
	}
	if ackLost && !rec.Hung && res.panic == "" {
		run.Crash("crashed after the last point, before the ack")
		rec.AckLost = true
	}
	run.Finish()
	rec.Steps = run.Steps()
	rec.Crashed, rec.CrashAt, rec.Reason = run.Crashed()
	rec.Err, rec.Panic = res.err, res.panic
	if rec.Crashed {
		c.worker.Heal()
	}
	return rec
}

var (
	stackOffset = regexp.MustCompile(` \+0x[0-9a-f]+$`)
	stackArgs   = regexp.MustCompile(`\([^()]*\)$`)
)

// cleanStack keeps the frames from the panic to the job's entry, without
// goroutine numbers, addresses, offsets or directories, so the same panic
// always prints the same text.
func cleanStack(stack string) string {
	lines := strings.Split(strings.TrimSpace(stack), "\n")
	var out []string
	started := false
	for i := 0; i+1 < len(lines); i++ {
		fn := strings.TrimSpace(lines[i])
		if strings.HasPrefix(fn, "goroutine ") {
			continue
		}
		if !strings.HasPrefix(lines[i+1], "\t") {
			continue
		}
		loc := stackOffset.ReplaceAllString(strings.TrimSpace(lines[i+1]), "")
		i++
		if strings.HasPrefix(fn, "panic(") {
			started = true
			continue
		}
		if !started {
			continue
		}
		if strings.Contains(fn, "twicekit/twice.(*checker).runAttempt") {
			break
		}
		fn = stackArgs.ReplaceAllString(fn, "(...)")
		if slash := strings.LastIndex(loc, "/"); slash >= 0 {
			loc = loc[slash+1:]
		}
		out = append(out, "    "+fn+"\n        "+loc)
	}
	return strings.Join(out, "\n")
}
