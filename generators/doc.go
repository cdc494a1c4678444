// Package generators holds pgregory.net/rapid generators for idempotency
// tests: the choices of a schedule (which scenario, which crash point, which
// interleaving) and the inputs that background jobs commonly take (IDs, money,
// e-mail addresses, idempotency keys, timestamps).
//
// Every generator shrinks toward a documented, boring value, so a failing
// property ends on the smallest input and the simplest schedule that still
// fails. Draw every value with a label that names it: rapid prints the labels
// with the values of a failing case.
//
// # Schedules
//
//   - [Index] — a position in a list of n things, shrinking toward 0 (the first).
//   - [CrashPoint] — a point of a reference run of n points, 1..n, shrinking
//     toward 1 (the earliest crash). Draw it after the reference run has
//     shown how many points there are.
//   - [Subset] — 1..max distinct positions out of n, in ascending order,
//     shrinking toward fewer and earlier ones ([0]).
//   - [Interleaving] and [Chooser] — the order in which workers take their
//     steps, shrinking toward fewer context switches (0 preemptions: every
//     worker runs to its end before the next starts). They return a
//     concurrent.Schedule, printed in run-length form ("A3B2": A three
//     steps, then B two), the token a check prints and replays.
//
// # Job inputs
//
//   - [IDs], [IDsBetween] — positive int64 IDs, shrinking toward the lower bound (1).
//   - [Amounts], [AmountsBetween] — [Money] as integer minor units with an ISO
//     4217 currency, shrinking toward 1 minor unit of the first currency.
//   - [Emails] — lower-case addresses on the reserved example domains,
//     shrinking toward "ann@example.com".
//   - [Key], [ISOWeek], [PayoutKeys] — idempotency keys derived from stable
//     parts of a job ("payout-restaurant-381-2026-W42"), never from randomness.
//   - [Times], [TimesIn] — UTC timestamps in a window, shrinking toward its start.
//
// # Combinators
//
//   - rapid.SliceOfNDistinct — a batch of 1..max records with distinct keys
//     (unique IDs); rapid's own.
//   - [ChildrenOf] — records that belong to a parent (orders of one customer).
//   - [Weighted] — one of several generators, the first one favoured and
//     shrunk toward.
//
// Build the input of your own job with rapid.Custom from these:
//
//	payout := rapid.Custom(func(t *rapid.T) Payout {
//		return Payout{
//			Restaurant: generators.IDs().Draw(t, "restaurant"),
//			Amount:     generators.AmountsBetween(100, 10_000_000, "INR").Draw(t, "amount"),
//			Week:       generators.Times().Draw(t, "week"),
//		}
//	})
//
// The package depends on rapid and, for schedules, on package concurrent
// (which needs only the standard library); package twice uses it to draw
// its scenarios when a check runs inside rapid.Check.
package generators
