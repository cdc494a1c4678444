// Package fakeserve serves one worker's fakes: a listener per fake on
// 127.0.0.1, a goroutine per connection accepted, and their end with the
// check (Servers). A serve function that panics, or that does not return
// within a grace period of the check closing its connection, is collected
// as the check's trouble (Trouble), once per text. A Worker is the fakes of
// one worker: the SMTP server behind a.SMTP and one listener per ServeFake
// option, the options' mistakes, the address of a fake by name and a name
// no fake serves (worker.go). Handles are what a connection calls on: the
// fakes' context and the worker's recorder, gate and log (worker.go). An
// SMTP message is one point of the attempt and an email effect per
// recipient, refused in SMTP's words when the attempt cannot take it
// (smtp.go).
//
// twice keeps ServeFake, FakeConn and Attempt.FakeAddr, their docs, and the
// worker's effect handles: it hands in the gate, the log and, for each
// ServeFake option, the function that serves a connection as a *FakeConn.
package fakeserve
