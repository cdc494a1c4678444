package effects

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Recorder performs effects of any kind: it makes each one a point of the
// attempt (through the [Gate]), runs the function that does it, records it
// in the [Log] and lets the harness strike after the apply (a crash, a lost
// reply). [Mailer], [WebhookSink] and the hosts of [Router] are its users;
// a job reaches it through its attempt (twice's Attempt.Effect).
type Recorder struct {
	log  *Log
	gate Gate
}

// NewRecorder returns a recorder that records in log (nil: nowhere) and asks
// gate (nil: nothing is refused and effects carry the zero Origin).
func NewRecorder(log *Log, gate Gate) *Recorder { return &Recorder{log: log, gate: gate} }

// Do performs one effect of kind (any name: "sms", "publish", "slack") on
// key (what it targets: a phone number, a topic, a channel) with payload
// (what was sent), in this order:
//
//  1. payload is rendered in its canonical form: a string or []byte as is,
//     anything else as JSON (maps with sorted keys); an error here performs
//     nothing;
//  2. the gate's Before: the point before the call; a refusal performs
//     nothing and returns an error wrapping the gate's;
//  3. do(ctx), when do is not nil: the real call (or a fake's); an error from
//     it is returned wrapped and nothing is recorded;
//  4. the effect is recorded as Effect{Kind: kind, Key: key, Payload: the
//     canonical payload};
//  5. the gate's After: an error there means the effect stays applied and the
//     job gets the error (the attempt died after the apply, or the reply was
//     lost).
//
// The point's label, shown on timelines, is kind, key and the payload
// (shortened to 40 characters): `sms +15550100 "Your code is 4242"`.
func (r *Recorder) Do(ctx context.Context, kind, key string, payload any, do func(ctx context.Context) error) error {
	if kind == "" {
		return fmt.Errorf("effects: an effect needs a kind (a name such as \"sms\"; policies are declared per kind)")
	}
	p, err := CanonicalPayload(payload)
	if err != nil {
		return fmt.Errorf("effects: %s %s: %w", kind, key, err)
	}
	c := Call{Kind: kind, Label: effectLabel(kind, key, p)}
	return r.apply(ctx, c, func(ctx context.Context, o Origin) error {
		if do != nil {
			if err := do(ctx); err != nil {
				return err
			}
		}
		recordIn(r.log, Effect{Kind: kind, Key: key, Payload: p, Origin: o})
		return nil
	})
}

// CanonicalPayload renders an effect's payload the way [Recorder.Do]
// records it: a string or []byte as is, nil as "", anything else as JSON
// (encoding/json: maps with sorted keys, structs in field order).
func CanonicalPayload(payload any) (string, error) {
	switch v := payload.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("the payload cannot be rendered as JSON (pass a string, []byte, or a JSON-encodable value): %w", err)
	}
	return string(b), nil
}

// maxLabelPayload is how much of a payload a point's label shows.
const maxLabelPayload = 40

func effectLabel(kind, key, payload string) string {
	s := kind
	if key != "" {
		s += " " + key
	}
	if payload == "" {
		return s
	}
	if utf8.RuneCountInString(payload) > maxLabelPayload {
		payload = string([]rune(payload)[:maxLabelPayload]) + "…"
	}
	return s + " " + strconv.Quote(payload)
}

// apply runs one gated effect call: Before, do, After. After is asked only
// when do succeeded (an error from do means nothing was applied).
func (r *Recorder) apply(ctx context.Context, c Call, do func(context.Context, Origin) error) error {
	var o Origin
	if r.gate != nil {
		var err error
		if o, err = r.gate.Before(ctx, c); err != nil {
			return fmt.Errorf("effects: %s: refused: %w", c.Label, err)
		}
	} else if err := ctx.Err(); err != nil {
		return fmt.Errorf("effects: %s: refused: %w", c.Label, err)
	}
	if err := do(ctx, o); err != nil {
		return fmt.Errorf("effects: %s: %w", c.Label, err)
	}
	if r.gate != nil {
		if err := r.gate.After(ctx, c); err != nil {
			return fmt.Errorf("effects: %s: applied, but the reply was lost: %w", c.Label, err)
		}
	}
	return nil
}
