package twiceriver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/twice"
)

// riverWords describes a scenario as it happened under River: what River
// did after the fault comes from the scenario's own attempts (completed in
// the worker's transaction, cancelled, left running, rescued), never from
// the kind of scenario alone.
func riverWords(s twice.Scenario, h twice.Happened, generic string) string {
	after := afterFault(s, h)
	switch s.Kind {
	case twice.AckLost:
		if h.AckCommitted {
			return "sequential: Work returned after completing the job in its own transaction (river.JobCompleteTx), so River did not run it again"
		}
		return "sequential: Work returned, River's completion of the job was lost (it stayed running), and " + after
	case twice.CrashAfterLast:
		if h.AckCommitted {
			return fmt.Sprintf("crash after the last point (%d of %d): %s", s.Of, s.Of, after)
		}
		w := fmt.Sprintf("crash after the last point (%d of %d): the worker's work had committed, then it died before River completed the job (it stayed running), and %s", s.Of, s.Of, after)
		if h.NotDelivered == "" {
			w += "; complete the job in the work's transaction with river.JobCompleteTx"
		}
		return w
	case twice.CrashBefore, twice.CrashAfterApply, twice.Redrive:
		if !h.AckCommitted {
			after = "the job stayed running and " + after
		}
		return strings.TrimSuffix(generic, ", then redelivery") + "; " + after
	case twice.DuplicateEnqueue:
		return "duplicate enqueue: the job was inserted twice (two river_job rows of the same kind and args; UniqueOpts in its InsertOpts would have skipped the second)"
	case twice.DuplicateOverlap:
		return fmt.Sprintf("concurrent duplicate enqueue: the producer enqueued the job twice and two workers took both copies at once (two river_job rows of the same kind and args; UniqueOpts in its InsertOpts would have skipped the second); job-1 paused after point %d of %d while job-2 ran to the end, then job-1 resumed", s.Point, s.Of)
	case twice.Overlap:
		return fmt.Sprintf("overlap after point %d of %d: the job was still running past RescueStuckJobsAfter, River's rescuer ran it again to the end, then the first run resumed", s.Point, s.Of)
	case twice.Interleaved:
		return fmt.Sprintf("concurrent: River's rescuer ran the job again while its first run was still running past RescueStuckJobsAfter, interleaved %s (A is the first run, B the rescuer's)", s.Schedule)
	}
	return generic
}

// afterFault is what River did with the job after the crash or the lost
// completion.
func afterFault(s twice.Scenario, h twice.Happened) string {
	switch {
	case h.AckCommitted && s.Point > 0:
		return fmt.Sprintf("the job had been completed in the worker's transaction (river.JobCompleteTx), so River did not run it again: what came after that commit, from point %d on, was lost", s.Point)
	case h.AckCommitted:
		return "the job had been completed in the worker's transaction (river.JobCompleteTx), so River did not run it again: what came after that commit was lost"
	case h.NotDelivered != "":
		return h.NotDelivered + ": its work is lost"
	case h.Ended:
		return "River's rescuer ran it again after its timeout and RescueStuckJobsAfter, and the job cancelled itself (river.JobCancel)"
	}
	return "River's rescuer ran it again after its timeout and RescueStuckJobsAfter"
}

// riverLabel names River's own statements on timelines by what they are:
// River's driver sends sqlc's queries, labelled by their names.
func riverLabel(label string) string {
	name, ok := strings.CutPrefix(label, "-- name: ")
	if !ok {
		return label
	}
	_, kinds, _ := strings.Cut(name, " · kinds ")
	name, _, _ = strings.Cut(name, " ")
	switch name {
	case "JobSetStateIfRunningMany":
		return "river.JobCompleteTx (the job's completion)"
	case "JobInsertFastMany", "JobInsertFastManyNoReturning", "JobInsertFull", "JobInsertFullMany":
		if kinds != "" {
			return "River's insert of " + kinds + " (client.Insert or InsertTx)"
		}
		return "River's insert of a job (client.Insert or InsertTx)"
	case "PGAdvisoryXactLock":
		return "River's advisory lock of a unique insert"
	}
	if !riverStatements[name] {
		return label // the app's own sqlc query: not River's to name
	}
	return "River's " + name
}

// insertNote is River insert middleware that notes the kinds a statement
// inserts on its label (twice.NoteStatements), for riverLabel.
type insertNote struct{ river.MiddlewareDefaults }

func (*insertNote) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	var kinds []string
	for _, p := range params {
		if !slices.Contains(kinds, p.Kind) {
			kinds = append(kinds, p.Kind)
		}
	}
	return doInner(twice.NoteStatements(ctx, "kinds "+strings.Join(kinds, ", ")))
}

// withInsertNote is cfg with insertNote innermost of its insert middleware
// (in Middleware, or in JobInsertMiddleware when the app uses the older
// pair: River takes one or the other).
func withInsertNote(cfg *river.Config) *river.Config {
	c := *cfg
	if len(c.JobInsertMiddleware) > 0 || len(c.WorkerMiddleware) > 0 { //nolint:staticcheck // the app's older fields
		c.JobInsertMiddleware = append(slices.Clone(c.JobInsertMiddleware), &insertNote{}) //nolint:staticcheck
	} else {
		c.Middleware = append(slices.Clone(c.Middleware), &insertNote{})
	}
	return &c
}
