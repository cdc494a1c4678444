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
type Mailer struct {
	log  *Log
	gate Gate
}

// NewMailer returns a mailer that records what it sends in log. gate may be
// nil: then nothing is refused and effects carry the zero Origin.
func NewMailer(log *Log, gate Gate) *Mailer { return &Mailer{log: log, gate: gate} }

// Send delivers e: it asks the gate (a refusal sends nothing), records
// Effect{Kind: "email", Key: e.To, Payload: e.Subject, plus "\n" + e.Body when
// there is a body}, then
// asks the gate again (an error there means the email was sent but the reply
// was lost: the effect stays and the error is returned). Errors wrap the
// gate's, so errors.Is works.
func (m *Mailer) Send(ctx context.Context, e Email) error {
	c := Call{Kind: KindEmail, Label: fmt.Sprintf("email to %s: %s", e.To, e.Subject)}
	return apply(ctx, m.gate, c, func(o Origin) {
		recordIn(m.log, Effect{Kind: KindEmail, Key: e.To, Payload: e.payload(), Origin: o})
	})
}

// apply runs one gated effect call: Before, do, After.
func apply(ctx context.Context, g Gate, c Call, do func(Origin)) error {
	var o Origin
	if g != nil {
		var err error
		if o, err = g.Before(ctx, c); err != nil {
			return fmt.Errorf("effects: %s: refused: %w", c.Label, err)
		}
	} else if err := ctx.Err(); err != nil {
		return fmt.Errorf("effects: %s: refused: %w", c.Label, err)
	}
	do(o)
	if g != nil {
		if err := g.After(ctx, c); err != nil {
			return fmt.Errorf("effects: %s: applied, but the reply was lost: %w", c.Label, err)
		}
	}
	return nil
}

// payload is what two emails must share to be the same email.
func (e Email) payload() string {
	if e.Body == "" {
		return e.Subject
	}
	return e.Subject + "\n" + e.Body
}
