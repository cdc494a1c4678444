package queue

import "github.com/twicekit/twicekit/faults"

// Attempt is what the queue knows of one attempt (one delivery of a job):
// the facts of twice's AttemptRecord it reads, and what it made of them
// (Acked, Terminal, Note), which AfterAttempt sets.
type Attempt struct {
	JobID  string
	Number int
	Points []faults.Step
	Err    error
	// Crashed: the check crashed the attempt; CrashedAfterAck: at a point
	// after the ack, so the queue does not deliver the job again for it.
	Crashed         bool
	CrashedAfterAck bool
	Panic, Goexit   string
	Hung            bool
	// AfterRun is the attempt's calls after Run (or the entry of a
	// goroutine still running); AfterRunSites, where the goroutines that
	// made them were started.
	AfterRun      []string
	AfterRunSites []string

	Acked        bool   // the ack had committed in the job's own transaction
	Terminal     bool   // returned an error that ends the job
	NotDelivered bool   // the queue would not deliver it (Note says why)
	Note         string // the queue's words, printed under the attempt
}
