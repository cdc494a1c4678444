package watermillorders

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicewatermill"
)

// Order9812 is the message every form is checked with, as the producer
// publishes it.
func Order9812() *message.Message {
	return message.NewMessage("0b8e4c1e-0000-4000-8000-000000009812", []byte(`{"order_id": 9812}`))
}

// Job is the orders topic's handler h, built on the attempt's pool and
// publisher, with the application's receipts handler.
func Job(name string, h func(a *twice.Attempt) message.NoPublishHandlerFunc) twicewatermill.Job {
	return twicewatermill.Job{
		Name: "watermillorders: " + name, Schema: Schema, Seed: Seed,
		Topic: "orders", Message: Order9812(), NoPublishHandler: h,
		Handlers: func(a *twice.Attempt) map[string]message.NoPublishHandlerFunc {
			return map[string]message.NoPublishHandlerFunc{"receipts": SendReceipt(a.Mailer)}
		},
	}
}

func form(name string, h func(a *twice.Attempt) message.NoPublishHandlerFunc, flagged []string, lesson string) story.Form {
	j, opts := Job(name, h).Twice()
	return story.Form{Story: "watermillorders", Name: name, Job: j, Options: opts, Flagged: flagged, Lesson: lesson}
}

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{
		form("mark-then-reward", func(a *twice.Attempt) message.NoPublishHandlerFunc { return MarkThenReward(a.Pool) }, []string{"crash@2"},
			"the processed mark commits alone: a crash before the points loses them"),
		form("mark-and-reward", func(a *twice.Attempt) message.NoPublishHandlerFunc { return MarkAndReward(a.Pool) }, nil,
			"the mark and the points in one transaction, keyed on the order"),
		form("check-then-act-on-uuid", func(a *twice.Attempt) message.NoPublishHandlerFunc { return CheckThenAct(a.Pool) }, []string{"duplicate-enqueue"},
			"watermill-sql never runs one message twice at once; a duplicate message has another UUID"),
		form("receipt-outside-tx", func(a *twice.Attempt) message.NoPublishHandlerFunc {
			return RewardThenPublish(a.Pool, twicewatermill.NewPublisher(a))
		}, []string{"crash@5"},
			"the receipt published after the commit: a crash in between loses it"),
		form("receipt-in-outbox", func(a *twice.Attempt) message.NoPublishHandlerFunc { return RewardWithReceipt(a.Pool) }, nil,
			"the receipt in watermill-sql's table, in the handler's transaction: worked by the receipts handler"),
	}
}
