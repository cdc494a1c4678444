package riverjobs

import (
	"github.com/riverqueue/river"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceriver"
)

// RewardJob is the reward of order 9812 by w (its Pool is the attempt's).
func RewardJob(w RewardWorker) twiceriver.Job[RewardArgs] {
	return twiceriver.Job[RewardArgs]{
		Schema: Schema, Seed: Seed, Args: RewardArgs{OrderID: 9812},
		Worker: func(a *twice.Attempt) river.Worker[RewardArgs] {
			w := w
			w.Pool = a.Pool
			return &w
		},
	}
}

// InvoiceJob is the email of invoice id by w (its Pool and Mailer are the
// attempt's).
func InvoiceJob(id int64, w InvoiceWorker) twiceriver.Job[InvoiceArgs] {
	return twiceriver.Job[InvoiceArgs]{
		Schema: Schema, Seed: Seed, Args: InvoiceArgs{InvoiceID: id},
		Worker: func(a *twice.Attempt) river.Worker[InvoiceArgs] {
			w := w
			w.Pool, w.Mailer = a.Pool, a.Mailer
			return &w
		},
	}
}

// InvoiceOptions compare email_sent_at as set or not (now() differs between
// runs) and declare the email at-most-once.
var InvoiceOptions = []twice.Option{
	twice.Normalize("invoices.email_sent_at", func(v string) string {
		if v == "NULL" {
			return v
		}
		return "set"
	}),
	twice.EffectPolicy("email", effects.AtMostOnce),
}

// form makes a story form of a River job.
func form[T river.JobArgs](name string, job twiceriver.Job[T], flagged []string, lesson string, opts ...twice.Option) story.Form {
	j, ropts := job.Twice()
	j.Name = "riverjobs: " + name
	return story.Form{Story: "riverjobs", Name: name, Job: j, Options: append(ropts, opts...), Flagged: flagged, Lesson: lesson}
}

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{
		form("reward-completed-after-work", RewardJob(RewardWorker{}), []string{"sequential", "crash@end"},
			"River completes the job after Work returns: a crash in between runs the increment again"),
		form("reward-follow-up-outside-tx", RewardJob(RewardWorker{CompleteInTx: true, FollowUpOutside: true}),
			[]string{"crash@6", "crash@7", "crash@8", "crash@9"},
			"a follow-up job inserted outside the work's transaction is inserted again by the retry"),
		form("reward-complete-tx", RewardJob(RewardWorker{CompleteInTx: true}), nil,
			"the points, the follow-up job and JobCompleteTx commit together: the completion is the ack"),
		form("invoice-unguarded", InvoiceJob(381, InvoiceWorker{}), []string{"sequential", "crash@end", "duplicate-enqueue", "crash-after@5", "reply-lost@5"},
			"without the guard and the transactional completion, every rerun sends the invoice again", InvoiceOptions...),
		form("invoice-guarded-complete-tx", InvoiceJob(381, InvoiceWorker{Guarded: true}), nil,
			"claim and complete in one transaction, then send: at most once", InvoiceOptions...),
		form("invoice-missing-cancelled", InvoiceJob(999, InvoiceWorker{Guarded: true}), nil,
			"river.JobCancel ends the job: not a failed run, not run again", InvoiceOptions...),
	}
}
