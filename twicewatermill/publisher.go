package twicewatermill

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/twicekit/twicekit/twice"
)

// EffectKind is the kind of the effect a message published through
// NewPublisher makes: twice.EffectPolicy(twicewatermill.EffectKind, …)
// declares its policy (exactly-once unless declared).
const EffectKind = "watermill message"

// Publisher is a message.Publisher for one attempt whose publishes leave
// the check's world: to another transport (Kafka, AMQP, a watermill-sql
// publisher outside the handler's transaction), a poison queue, a
// notification. Each message it publishes is a point of the attempt and
// an effect of kind EffectKind, keyed by its topic, its payload compared:
// a crash can strike before it or after it was sent, and a redelivery
// publishes it again. The check does not consume what it publishes: a
// message published in the handler's own transaction to watermill-sql's
// tables is an outbox row, worked by Job.Handlers.
type Publisher struct {
	a *twice.Attempt
}

// NewPublisher returns the publisher of the attempt a: build it in
// Job.Handler, Job.Middleware, Job.Publisher or Job.Handlers, where the
// application builds its handlers with its message.Publisher.
func NewPublisher(a *twice.Attempt) *Publisher { return &Publisher{a: a} }

// Publish publishes the messages to topic, one effect each, in order. It
// stops at the first that fails.
func (p *Publisher) Publish(topic string, messages ...*message.Message) error {
	if p == nil || p.a == nil {
		return errors.New("twicewatermill: Publisher.Publish on a publisher of no attempt: build it with NewPublisher(a)")
	}
	for _, m := range messages {
		if m == nil {
			return errors.New("twicewatermill: Publisher.Publish got a nil message")
		}
		if err := p.a.Effect(m.Context(), EffectKind, topic, []byte(m.Payload), nil); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing: the publisher holds nothing.
func (p *Publisher) Close() error { return nil }

var _ message.Publisher = (*Publisher)(nil)
