// Package findings makes a finding from a scenario's run and the reference
// run's, from a view twice builds of them.
//
// A [Run] is a run as a finding draws it: its attempts (names, points, how
// each ended, the texts a finding rewrites) and what the scheduler did in
// a concurrent scenario (run.go). A [Scenario] is what a finding reads of a
// run besides: its rows and effects, the problems and hints twice words
// from its own records, and what its headline says of the queue.
//
// It owns the assembly of a finding: the diff against the reference run
// (internal/compare), the problems and hints, the headline and the
// timeline (Compare, and Reference for a reference run that breaks a
// promise by itself; finding.go). It owns the text rewrites applied to a
// run and to a finding: the queue's labels, Idempotency-Key aliases,
// varying values, inlined literals, and the numbered placeholders, in the
// order the report prints them (rewrite.go). It draws a run for
// internal/report, each attempt's outcome in the timeline's words.
// It says how an attempt ended from what it did (EndOf).
//
// twice keeps its Finding, ScenarioRun, AttemptRecord and Problem; it
// builds the views from them, words the problems (a panic, a hang, a
// foreign context or session, what a clean run did), and turns a finding
// back into its own at the boundary.
package findings
