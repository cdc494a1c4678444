// Package effects records what a job did outside the database (emails,
// payments, webhooks), provides the fakes a job calls to do it, and compares
// two runs' effects under a policy per effect kind.
//
// It depends on the standard library only.
//
// # Index
//
//   - The record: [Effect], [Log] (safe for concurrent attempts), [Origin].
//   - The harness's hook: [Gate] and [Call]. Every fake asks Gate.Before
//     before a call (a refusal means nothing reaches the world) and
//     Gate.After once the call was applied (an error there means the effect
//     stays applied and the job sees the error: a lost reply, or the attempt
//     died after the apply).
//   - Fakes: [Mailer] (no de-duplication), [WebhookSink] (no
//     de-duplication), and [Provider], a payment API served over real HTTP
//     on loopback with Idempotency-Key semantics, called through the client
//     returned by [Provider.Client].
//   - Comparison: [Policy] per kind in [Policies], [Compare] returning
//     [Mismatch]es.
//   - Teaching: [Diagnose] (changed idempotency keys, retries that computed a
//     different request, forgotten keys) and [Explain] (which way a
//     duplicate or missing effect was chosen, and the policy that accepts it).
package effects
