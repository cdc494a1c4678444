// Package report writes twice's reports from views of a finished check.
//
// A [Finished] is a check's view: its findings (headlines, problems,
// database diffs, effects, hints, replay lines) and what it left out. A
// [Run] is a scenario run's view: its attempts (names, points, how each
// ended, the queue's notes) and, in a concurrent scenario, what the
// scheduler did (the order it released points in, the lock waits, the
// attempts it found stuck). twice builds both from its own records.
//
// It writes the text report and the Markdown report (text.go). It writes a
// run's text timeline, one point a line, in two columns for the
// attempts that ran at once (timeline.go). It lists a run's timeline as
// events, in the same order, for the JSON report (events.go). It builds
// the JSON report from a check's view, in copies of twice's JSON types,
// field for field (json.go). It merges the JSON reports of a check's
// shards into one, in the order the unsharded check plays them, and writes
// the merged Markdown (merge.go). It draws a run as a Mermaid sequence
// diagram for the Markdown report (mermaid.go). It says which attempts of
// a concurrent scenario were stuck and where each was, and names the lock a
// returned attempt's session still held (stuck.go).
// It says the problems of a finding in words: the problem kinds' names and
// the promises headlines name, an attempt that hung or was slow, calls on
// a context not the attempt's, a clean run that failed or snoozed, the
// point a scenario's fault hit, and the headline made of them and of what
// the queue did (problems.go). It says what a check was told to skip or
// left out, and whether it is partial (left.go). It says how an attempt
// that panicked or called runtime.Goexit ended, and which scenarios a
// check left out after a hang (aborted.go).
// It writes a check's report files under names no other check of the run
// has, and GitHub Actions' annotation and step summary, whose headline
// says why a check could not run (publish.go).
// It owns where a check's reports go (Publishing): the report directory,
// GitHub Actions, the binary's names and its first report that could not
// be written, whether go test runs with -v, and the PostgreSQL a verbose
// binary names once (publishing.go).
// It sends a finished check's report where a Target says, finds the test's
// line that asked for the check, and the directory a test binary's reports
// go under (where.go). It writes the one command that replays a scenario,
// the package named from the directory the go command is typed in: the
// workspace's root, else the module's (commandroot.go). It writes the line
// a passing check logs under go test -v, what it ran by kind, and the one
// about the values compared by shape (coverage.go).
//
// The report types users read (Report, JSONReport) stay in twice, whose
// methods call it; twice converts its JSON types to the copies and back
// (Copy, field for field), and builds the views from its own records
// (Map, Strings).
package report
