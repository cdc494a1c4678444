// Package checkrun runs a check in order: it owns the order of its steps,
// and twice's checker does each step behind callbacks.
//
// It owns the order of a check's run: the crash states' fingerprints
// taken, the reference run played while the lanes are made, the reference
// runs judged, the plan kept to the shard, the wall budget set from a clean
// run's cost, the sequential scenarios played on the lanes, under a wall
// budget every kind's first one before the concurrent scenarios and the
// rest after them (run.go).
// It folds the results in plan order: a crash point covered by an earlier
// one with the same world skipped, what the wall budget left out, the
// first hung scenario stopping the rest, in the report's words (run.go,
// plan.go).
// It owns one scenario's looks at the sessions the check did not open:
// watched during the reference run, looked at at its points and when the
// attempts are over (sessions.go).
// It owns the check's errors around the run: a job or options that make no
// check, the server's refusal to give the database, the caller's context
// ended, closing the database, and after the run a refused connection, a
// server gone, a pool the job closed (check.go).
// It owns whether a failed check keeps its database and what to know about
// its URL (check.go).
// It opens the check's database on the server, with every connection its
// workers may open reserved, and its worker (open.go).
// It plays the clean run again, a few times, to name a session the check
// did not see (open.go).
// It marks an error as the user's mistake in the check's options or the
// job's setup, for which a check keeps no database (usage.go).
//
// twice keeps the checker (its state is internal/checkstate's), Check's
// signature and doc, how a scenario is played, compared and recorded, the reference runs' judgement
// (the finding, the second clean run), the plan and rapid's draw, the
// lanes made, the concurrent scenarios' play, and the report types that
// the run's outcome is copied into.
package checkrun
