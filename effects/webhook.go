package effects

import "context"

// WebhookSink is a generic webhook receiver that de-duplicates nothing:
// every Post that is not refused is recorded.
type WebhookSink struct{ rec *Recorder }

// WebhookPoster is what [WebhookSink] implements.
type WebhookPoster interface {
	Post(ctx context.Context, url string, body []byte) error
}

// NewWebhookSink returns a sink that records what it receives in log. gate
// may be nil, as for [NewMailer].
func NewWebhookSink(log *Log, gate Gate) *WebhookSink {
	return &WebhookSink{rec: NewRecorder(log, gate)}
}

// Post delivers body to url and records Effect{Kind: "webhook", Key: url,
// Payload: string(body)}, with the same gate protocol as [Mailer.Send].
func (w *WebhookSink) Post(ctx context.Context, url string, body []byte) error {
	c := Call{Kind: KindWebhook, Label: "webhook POST " + url}
	payload := string(body)
	return w.rec.apply(ctx, c, func(_ context.Context, o Origin) error {
		recordIn(w.rec.log, Effect{Kind: KindWebhook, Key: url, Payload: payload, Origin: o})
		return nil
	})
}
