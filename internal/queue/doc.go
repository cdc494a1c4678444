// Package queue is the model of the queue a check plays. Config is the
// queue's semantics as a queue adapter set them: which errors end a job,
// which snooze it, whether its ack commits in the job's own transaction,
// the hooks that keep the queue's own rows, the labels of its statements
// (queue.go). An attempt's outcome is classified from its facts (an
// Attempt): delivered again, delivered again later (snoozed, not counted)
// or done, with the queue's words printed under it (queue.go). Happened is
// what the queue did in a scenario, read from its attempts, and Said the
// headline's words for it (queue.go). Deliver is the delivery loop of one
// job: the scenario's fault striking one delivery, snoozes not counted, the
// queue giving up (deliver.go). The runners (a lease queue, a locking
// consumer, an in-process scheduler) say which scenarios can happen and in
// whose words (runner.go). The reference run's deliveries (those before it
// stopped snoozing), its points numbered across them, and whether a second
// clean run delivered as the first are in deliveries.go. The follow-up jobs
// the checked job enqueues are worked as the queue works them, to a limit,
// with their bookkeeping (keys, kinds, runs and limits by job ID) and the
// report's note on them, from what the options say of them (Follow)
// (followups.go). A periodic job's schedule gives its
// next run's time on the check's clock (periodic.go). The goroutines an
// attempt leaves running after Run are waited for, and a check that caught
// one gets the one finding that says so (afterrun.go).
//
// twice keeps the options (TerminalError, SnoozeError,
// AckInJobTransaction, QueueBookkeeping, QueueLabels, QueueWords,
// QueueWordsOf, WorkFollowUps, Periodic, LeaseQueue and their companions)
// and the types users read (Delivery, FollowUp, Happened), converting at
// the boundary: the options wrap the user's callbacks over this package's
// copies. twice keeps its checker, which hands in an attempt's facts and
// the callbacks that run one, and turns this package's texts into its
// Problems and Findings.
package queue
