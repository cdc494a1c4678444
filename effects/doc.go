// Package effects records what a job did outside the database (emails,
// payments, webhooks, text messages, requests to a partner's API: any kind),
// provides the fakes a job calls to do it, and compares two runs' effects
// under a policy per effect kind.
//
// It depends on the standard library only.
//
// # Effects
//
// An [Effect] is one call that reached the world: its kind, key and
// payload, and the [Origin] (job, attempt, point) that made it. A [Log]
// holds a run's effects; it is safe for concurrent attempts.
//
// [Recorder.Do] performs one effect of any kind as a point of the attempt
// and records it. [CanonicalPayload] says how a payload is recorded. The
// fakes below are built on it.
//
// # The harness's hook
//
// A [Gate] sees every effect [Call]. Gate.Before runs before the call; a
// refusal means nothing reaches the world. Gate.After runs once the call
// was applied; an error there leaves the effect applied, and the job sees
// the error (a lost reply, or an attempt that died after the apply).
//
// # Fakes
//
// [Mailer] and [WebhookSink] send without de-duplication, as real
// providers do. [Router] is an HTTP client routed by host: to the payment
// provider, and to handlers mounted with [Router.Mount], whose requests are
// effects of kind [KindHTTP]. It refuses any other host, so nothing reaches
// the network. [Provider] is a payment API in Stripe's dialect over real
// HTTP on loopback, with Stripe's Idempotency-Key semantics, called through
// [Provider.Client] or the Router.
//
// # Comparison
//
// [Compare] compares two runs' effects under a [Policy] per kind
// ([Policies]) and returns [Mismatch]es. [Diagnose] names the usual causes
// (changed idempotency keys, retries that computed another request,
// forgotten keys). [Explain] says which way a duplicate or missing effect
// went and which policy accepts it.
package effects
