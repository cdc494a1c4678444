package effects

import (
	"context"
	"fmt"
)

// Email is a message handed to the [Mailer].
type Email struct {
	To, Subject, Body string
}

// Mailer is a fake email provider. Like most real ones it de-duplicates
// nothing: every Send that is not refused is delivered and recorded.
type Mailer struct{ rec *Recorder }

// EmailSender is what [Mailer] implements: an app whose own mailer
// interface has this method takes the fake as it is.
type EmailSender interface {
	Send(ctx context.Context, e Email) error
}

// NewMailer returns a mailer that records what it sends in log. gate may be
// nil: then nothing is refused and effects carry the zero Origin.
func NewMailer(log *Log, gate Gate) *Mailer { return &Mailer{rec: NewRecorder(log, gate)} }

// Send delivers e, as a user of [Recorder]: it asks the gate (a refusal sends nothing), records
// Effect{Kind: "email", Key: e.To, Payload: e.Subject, plus "\n" + e.Body when
// there is a body}, then
// asks the gate again (an error there means the email was sent but the reply
// was lost: the effect stays and the error is returned). Errors wrap the
// gate's, so errors.Is works.
func (m *Mailer) Send(ctx context.Context, e Email) error {
	c := Call{Kind: KindEmail, Label: fmt.Sprintf("email to %s: %s", e.To, e.Subject)}
	return m.rec.apply(ctx, c, func(_ context.Context, o Origin) error {
		recordIn(m.rec.log, Effect{Kind: KindEmail, Key: e.To, Payload: e.payload(), Origin: o})
		return nil
	})
}

// payload is what two emails must share to be the same email.
func (e Email) payload() string {
	if e.Body == "" {
		return e.Subject
	}
	return e.Subject + "\n" + e.Body
}
