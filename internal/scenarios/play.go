package scenarios

import (
	"time"

	"github.com/twicekit/twicekit/internal/inject"
)

// The job IDs a scenario delivers: a duplicate enqueue adds job-2.
const Job1, Job2 = "job-1", "job-2"

// Delivery says how the queue treats a job in a sequential scenario: the
// fault of the scenario, which strikes once; twice's delivery.
type Delivery struct {
	Fault            inject.Plan   // the scenario's fault
	CrashAfterReturn bool          // crash the delivery that does not snooze after it returns, before the ack
	RedriveAfter     time.Duration // the delivery after the fault comes this much later on the check's clock
}

// Player is how twice's checker delivers the job in one scenario.
type Player struct {
	// Reference plays the reference run.
	Reference func()
	// LosingAck is the sequential scenario's first delivery; it reports
	// whether the queue delivers the job again.
	LosingAck func(job string) bool
	// Deliver delivers the job until an attempt succeeds; it reports whether
	// the job ended acknowledged.
	Deliver func(job string, d Delivery) bool
	// Concurrent plays two attempts at once: of one job ID, or of both
	// copies of a duplicate enqueue (duplicate).
	Concurrent func(duplicate bool) error
}

// playFunc delivers the job as the scenario says.
type playFunc func(p Player, s Scenario) error

// plays says how every scenario kind is played, the kinds in the order of
// the table kinds, which describes the rest of each (its name, token,
// words and how it is planned).
var plays = [...]playFunc{
	Once: func(p Player, _ Scenario) error {
		p.Reference()
		return nil
	},
	AckLost: func(p Player, _ Scenario) error {
		if p.LosingAck(Job1) {
			p.Deliver(Job1, Delivery{})
		}
		return nil
	},
	CrashBefore: func(p Player, s Scenario) error {
		p.Deliver(Job1, Delivery{Fault: inject.Plan{CrashBefore: s.Point}})
		return nil
	},
	CrashAfterLast: func(p Player, _ Scenario) error {
		p.Deliver(Job1, Delivery{CrashAfterReturn: true})
		return nil
	},
	DuplicateEnqueue: func(p Player, _ Scenario) error {
		if p.Deliver(Job1, Delivery{}) {
			p.Deliver(Job2, Delivery{})
		}
		return nil
	},
	CrashAfterApply: func(p Player, s Scenario) error {
		p.Deliver(Job1, Delivery{Fault: inject.Plan{CrashAfter: s.Point}})
		return nil
	},
	ReplyLost: func(p Player, s Scenario) error {
		p.Deliver(Job1, Delivery{Fault: inject.Plan{LoseReply: s.Point}})
		return nil
	},
	Redrive: func(p Player, s Scenario) error {
		p.Deliver(Job1, Delivery{Fault: inject.Plan{CrashAfter: s.Point}, RedriveAfter: s.After})
		return nil
	},
	Interleaved:          playConcurrentKind,
	Overlap:              playConcurrentKind,
	DuplicateOverlap:     playDuplicateKind,
	DuplicateInterleaved: playDuplicateKind,
	StatementReplyLost: func(p Player, s Scenario) error {
		p.Deliver(Job1, Delivery{Fault: inject.Plan{LoseReply: s.Point}})
		return nil
	},
}

func playConcurrentKind(p Player, _ Scenario) error { return p.Concurrent(false) }

func playDuplicateKind(p Player, _ Scenario) error { return p.Concurrent(true) }

// Playable reports whether the table says how the kind is played; a kind
// outside the table has no play.
func (k Kind) Playable() bool {
	return k >= 0 && int(k) < len(plays) && plays[k] != nil
}

// Play delivers the job as the scenario's kind says, through p. The kind
// must be Playable.
func Play(p Player, s Scenario) error { return plays[s.Kind](p, s) }
