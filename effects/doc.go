// Package effects records what a job did outside the database (emails,
// payments, webhooks, text messages, requests to a partner's API: any kind),
// provides the fakes a job calls to do it, and compares two runs' effects
// under a policy per effect kind.
//
// It depends on the standard library only.
//
// # Index
//
//   - The record: [Effect], [Log] (safe for concurrent attempts), [Origin].
//   - The open effect API: [Recorder.Do] performs one effect of any kind
//     (kind, key, payload and the function that does it) as a point of the
//     attempt, records it and lets the harness strike after the apply;
//     [CanonicalPayload] says how a payload is recorded. The fakes below are
//     its users.
//   - The harness's hook: [Gate] and [Call]. Every effect call asks
//     Gate.Before before the call (a refusal means nothing reaches the
//     world) and Gate.After once the call was applied (an error there means
//     the effect stays applied and the job sees the error: a lost reply, or
//     the attempt died after the apply).
//   - Fakes: [Mailer] ([EmailSender]; no de-duplication), [WebhookSink]
//     ([WebhookPoster]; no de-duplication), [Router] (an HTTP client routed
//     by host to the provider and to the http.Handlers mounted with
//     [Router.Mount]; any other host is refused, nothing reaches the
//     network; requests to mounted hosts are effects of kind [KindHTTP]),
//     and [Provider], a payment API in Stripe's dialect served over real
//     HTTP on loopback: any POST /v1/... path, JSON or form-encoded bodies,
//     Stripe-shaped objects with numbered ids, errors in Stripe's shape, and
//     Idempotency-Key semantics per key, called through [Provider.Client]
//     or the Router.
//   - Comparison: [Policy] per kind in [Policies], [Compare] returning
//     [Mismatch]es.
//   - Teaching: [Diagnose] (changed idempotency keys, retries that computed a
//     different request, forgotten keys; on every provider path) and
//     [Explain] (which way a duplicate or missing effect was chosen, and the
//     policy that accepts it).
package effects
