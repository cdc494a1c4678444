// Package runners holds what the runner that delivers the job changes in a
// check's words. A Kind is a runner's delivery model: a queue with a lease
// (the default), a consumer that holds a row lock until its ack, or a
// scheduler in one process (runner.go). It says why a runner cannot play
// a scenario, how a headline reads under the in-process scheduler, and the
// hint that two deliveries of one job at once assume a lease.
//
// twice keeps the options that declare the runner (LeaseQueue,
// LockingConsumer, InProcessScheduler), which scenarios they switch off,
// and when a finding gets the lease hint.
package runners
