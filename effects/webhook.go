package effects

import "context"

// WebhookSink is a generic webhook receiver that de-duplicates nothing:
// every Post that is not refused is recorded.
type WebhookSink struct {
	log  *Log
	gate Gate
}

// NewWebhookSink returns a sink that records what it receives in log. gate
// may be nil, as for [NewMailer].
func NewWebhookSink(log *Log, gate Gate) *WebhookSink { return &WebhookSink{log: log, gate: gate} }

// Post delivers body to url and records Effect{Kind: "webhook", Key: url,
// Payload: string(body)}, with the same gate protocol as [Mailer.Send].
func (w *WebhookSink) Post(ctx context.Context, url string, body []byte) error {
	c := Call{Kind: KindWebhook, Label: "webhook POST " + url}
	payload := string(body)
	return apply(ctx, w.gate, c, func(o Origin) {
		recordIn(w.log, Effect{Kind: KindWebhook, Key: url, Payload: payload, Origin: o})
	})
}
