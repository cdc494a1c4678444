// Package twicewatermill checks watermill handlers
// (github.com/ThreeDotsLabs/watermill) as watermill's router runs them on
// watermill-sql (github.com/ThreeDotsLabs/watermill-sql/v4), the transport
// that keeps the messages in PostgreSQL itself:
//
//   - the handler (a message.HandlerFunc or NoPublishHandlerFunc) runs
//     inside the application's router middleware (Job.Middleware:
//     middleware.Retry, Recoverer, PoisonQueue...), as the router's
//     handleMessage runs it: an error or a panic nacks the message; the
//     messages a HandlerFunc returns are published before the ack, a
//     failed publish nacks;
//   - the ack is the subscriber's: the consumer group's offset, in the
//     subscriber's own transaction, never in the handler's. A crash before
//     it, or its transaction lost, delivers the message again; a nack
//     sends it again after the subscriber's ResendInterval, with no limit
//     (the poison queue is what ends it);
//   - a duplicate message is a publisher that retried a publish that had
//     worked: a second row, under another UUID;
//   - concurrent deliveries are off: the subscriber holds its consumer
//     group's offsets row FOR UPDATE from the SELECT of a message to its
//     ack, so the group takes one message at a time;
//   - a message published through a watermill-sql publisher on the
//     handler's own transaction is an outbox row: with Job.Handlers, the
//     application's handlers by topic, the check works it after every
//     scenario, on the check's clock. A message published any other way
//     (NewPublisher(a): another transport, a poison queue) is a point and
//     an effect of kind EffectKind.
//
// Checking a handler takes three lines:
//
//	twicewatermill.AssertIdempotent(t, twicewatermill.Job{Schema: schema, Seed: seed,
//		Topic: "orders", Message: message.NewMessage(watermill.NewUUID(), payload),
//		NoPublishHandler: func(a *twice.Attempt) message.NoPublishHandlerFunc { return NewRewardHandler(a.Pool) }})
//
// The suite in differential_test.go runs the same handlers on a real
// message.Router fed by watermill-sql's subscriber, their messages
// published by watermill-sql's publisher, on the test's PostgreSQL, and
// compares, delivery by delivery, what watermill did with this model.
// docs/watermill.md has the table and what is not modelled
// (sql.TxFromContext, the ack deadline, other transports' semantics).
//
// Versions: watermill v1.5.0 to v1.5.1, with watermill-sql v4.1.1 to
// v4.1.2 (watermill-sql v4's floor: it requires watermill v1.5.0). This is a module
// of its own (github.com/twicekit/twicekit/twicewatermill): its go.mod
// requires the oldest releases, so adding it never raises an app's
// watermill; go.newest.mod names the newest, and CI runs the tests on
// both.
package twicewatermill
