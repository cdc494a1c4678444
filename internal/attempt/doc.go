// Package attempt runs one attempt's job function and waits for it. Go runs
// the function on a goroutine of its own, labelled for internal/goroutines,
// and tells how it ended: the error it returned, its panic with the stack
// from the panic to the job's entry (CleanStack), or the job's line that
// called runtime.Goexit (go.go). Wait waits for it at most the attempt
// timeout, crashes an attempt still running then as hung and gives it a
// grace period to return (GraceAfterCancel), and crashes one that returned
// before its ack when the scenario loses the ack (wait.go).
//
// twice keeps the Attempt and the AttemptRecord; it hands in the job's
// function and the queue's snooze test. internal/checkstate keeps the
// queue's fetch and follow-ups, the attempts by run, and what the check
// asks of a hung attempt (in PostgreSQL, the lock it waits for).
package attempt
