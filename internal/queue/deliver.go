package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Plan says how the queue treats a job: the fault of the scenario, which
// strikes once, in the delivery that reaches its point; every other
// delivery runs clean (twice's delivery).
type Plan struct {
	Fault            inject.Plan   // the scenario's fault (its points numbered across the job's snoozed deliveries)
	CrashAfterReturn bool          // crash the delivery that does not snooze after it returns, before the ack
	LoseAck          bool          // the ack of the delivery that does not snooze is lost: delivered again unless the ack committed with the job
	RedriveAfter     time.Duration // the delivery after the fault comes this much later on the check's clock
	Wait             func(context.Context, faults.Step) error
}

// pending reports whether d still has a fault to strike.
func (d Plan) pending() bool {
	f := d.Fault
	return f.CrashBefore > 0 || f.CrashAfter > 0 || f.LoseReply > 0 || d.CrashAfterReturn || d.LoseAck
}

// struck reports whether a is the delivery the fault of d struck.
func (d Plan) struck(a Attempt, snoozed bool) bool {
	f := d.Fault
	switch {
	case a.Crashed:
		return true
	case (d.CrashAfterReturn || d.LoseAck) && !snoozed:
		return true
	case f.LoseReply > 0:
		for _, p := range a.Points {
			if p.Index == f.LoseReply {
				return true
			}
		}
	}
	return false
}

// Deliveries is what delivering a job needs of the checker.
type Deliveries struct {
	// Run runs the job's next delivery with plan p, crashed after it
	// returns, before the ack, when crash; its ack is lost when lost
	// (unless it snoozed: a delivery that snoozed has no ack to lose). It
	// records the attempt and returns its facts, and whether it stopped
	// the scenario (a panic, a hang, a call after Run: its problem
	// recorded).
	Run func(p inject.Plan, crash, lost bool) (a Attempt, stop bool)
	// Later moves the check's clock on by d.
	Later func(d time.Duration)
}

// Deliver plays the queue for job: it delivers the job until an attempt
// succeeds, as an at-least-once queue does, with the fault p names, at most
// maxDeliveries times. A delivery that snoozes is not a failure and does
// not count towards maxDeliveries; the points of the deliveries that
// snoozed number the next one's on (Plan.Offset), as in the reference run.
// The fault strikes one delivery: every later one runs clean. It reports
// whether the job ended acknowledged, and the problem's text when the
// queue gave up on it.
func (q Config) Deliver(job string, p Plan, maxDeliveries int, d Deliveries) (ok bool, gaveUp string) {
	snoozes, offset, pending := 0, 0, p.pending()
	var last Attempt
	for n := 1; n <= maxDeliveries; n++ {
		ip, lost, crash := inject.Plan{Offset: offset, Wait: p.Wait}, false, false
		if pending {
			ip.CrashBefore, ip.CrashAfter, ip.LoseReply = p.Fault.CrashBefore, p.Fault.CrashAfter, p.Fault.LoseReply
			lost, crash = p.CrashAfterReturn || p.LoseAck, p.CrashAfterReturn && !p.LoseAck
		}
		a, stop := d.Run(ip, crash, lost)
		if stop {
			return false, ""
		}
		last = a
		if pending && p.struck(a, q.Snoozed(a)) {
			pending = false
			if p.RedriveAfter > 0 {
				d.Later(p.RedriveAfter)
			}
		}
		switch q.Outcome(a) {
		case Redeliver:
			continue
		case Later:
			offset += len(a.Points)
			if snoozes++; snoozes < maxDeliveries {
				n--
			}
			continue
		}
		return true, ""
	}
	why := "it crashed"
	if last.Err != nil {
		why = "it returned: " + last.Err.Error()
	}
	return false, fmt.Sprintf("%s never succeeded: the queue gave up after %s; the last time %s", job, reportfmt.Count(maxDeliveries, "delivery"), why)
}
