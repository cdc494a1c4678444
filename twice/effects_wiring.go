package twice

import (
	"context"
	"fmt"
	"net/http"

	"github.com/twicekit/twicekit/internal/handles"
)

// HTTPHost mounts handler (a fake of a partner's API) under host (such as
// "partner.example") for a.HTTP: the job's own HTTP code reaches it with
// only its base URL changed ("https://partner.example/..."). The handler
// runs in process, nothing goes to the network. Every request to it is a
// point of the attempt with every effect scenario (crash-after@N: the
// handler ran, then the attempt died; reply-lost@N: the handler ran, the
// job saw a timeout), and each request that changes something is an effect
// of kind "http" (declare a policy with EffectPolicy("http", …)); see
// effects.Router for exactly what is recorded. A handler that de-duplicates
// by Idempotency-Key answers a replay with the header
// "Idempotent-Replayed: true", and that request is not recorded again.
//
// Every scenario starts from the same world: when handler has a Reset()
// method the check calls it before each scenario (as it resets the
// provider's keys), so a fake that remembers keys forgets them.
//
// A request through a.HTTP to a host nobody mounted fails with an error
// naming the host and this option.
func HTTPHost(host string, handler http.Handler) Option {
	return optionFunc(func(c *config) {
		c.Effects.Hosts = append(c.Effects.Hosts, handles.Host{Name: host, Handler: handler})
	})
}

// Effect performs one effect of any kind and records it: an SMS, a message
// published to a bus, a post to a chat. It is a point of the attempt, so
// every scenario applies to it (crash before it; crash-after@N: it was
// done, then the attempt died; reply-lost@N: it was done, the job saw an
// error; late redrives), and the check compares the effects of kind under
// EffectPolicy(kind, …) (exactly-once unless declared).
//
// key is what the effect targets (a phone number, a topic, a channel) and
// counts in the comparison; payload is what was sent: a string or []byte
// as is, anything else as JSON. do performs it for real, or in a fake (nil:
// nothing to do but record it); an error from do means nothing was done:
// nothing is recorded and the error is returned. Any other error means the
// attempt must stop (it crashed, or the reply was lost and the effect did
// happen): return it. See effects.Recorder.Do for the exact order.
//
// An app written against its own interface needs one adapter method:
//
//	func (f smsFake) SendSMS(ctx context.Context, to, text string) error {
//	    return f.a.Effect(ctx, "sms", to, text, nil)
//	}
func (a *Attempt) Effect(ctx context.Context, kind, key string, payload any, do func(ctx context.Context) error) error {
	if a.recorder == nil {
		return fmt.Errorf("twice: Attempt.Effect on an attempt the check did not make: use the *Attempt a check passes to Job.Run")
	}
	return a.recorder.Do(ctx, kind, key, payload, do)
}
