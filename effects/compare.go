package effects

import (
	"fmt"
	"sort"
)

// Mismatch is one (kind, key, payload) whose count in a scenario breaks the
// policy of its kind, given its count in the reference run.
type Mismatch struct {
	Kind    string
	Policy  Policy
	Key     string // "" for payments: see Compare
	Payload string
	Want    int // times in the reference run
	Got     int // times in the scenario
}

// String renders m deterministically, e.g.
//
//	email ann@example.com "Your receipt": want 1, got 2 (exactly-once)
//	payment "{\"amount\":8400}": want 1, got 2 (exactly-once)
func (m Mismatch) String() string {
	return fmt.Sprintf("%s: want %d, got %d (%s)", describe(m.Kind, m.Key, m.Payload, keyCounts(m.Kind)), m.Want, m.Got, m.Policy)
}

// keyCounts reports whether the Key of an effect of this kind is part of
// what the world sees. The Key of a payment is the Idempotency-Key the job
// chose: a de-duplication token between the job and the provider, which the
// payee never sees.
func keyCounts(kind string) bool { return kind != KindPayment }

type item struct{ kind, key, payload string }

func itemOf(e Effect) item {
	it := item{kind: e.Kind, key: e.Key, payload: e.Payload}
	if !keyCounts(e.Kind) {
		it.key = ""
	}
	return it
}

// Compare compares the effects of the reference run (want) with those of a
// scenario (got), as multisets of (kind, key, payload), under the policy of
// each kind (a missing kind is [ExactlyOnce]). For each item made want times
// in the reference and got times in the scenario:
//
//   - exactly-once: got == want;
//   - at-least-once: got >= want;
//   - at-most-once: got <= want;
//   - under every policy, an item the reference never made (want == 0) is a
//     mismatch as soon as got > 0: a different email is not a duplicate one.
//
// The Key of a payment is its Idempotency-Key, a token between the job and
// the provider: Compare ignores it, so two payouts that differ only by key
// count as the same payout made twice, and a payout whose key changed from
// the reference run (a key drawn per attempt) but was made once matches.
// [Diagnose] explains key changes. Origins and Seqs are ignored.
//
// The result is sorted by kind, key and payload, and nil when every policy
// holds.
func Compare(want, got []Effect, p Policies) []Mismatch {
	type counts struct{ want, got int }
	m := map[item]*counts{}
	at := func(e Effect) *counts {
		it := itemOf(e)
		c := m[it]
		if c == nil {
			c = &counts{}
			m[it] = c
		}
		return c
	}
	for _, e := range want {
		at(e).want++
	}
	for _, e := range got {
		at(e).got++
	}
	var out []Mismatch
	for it, c := range m {
		pol := p.For(it.kind)
		if pol.holds(c.want, c.got) {
			continue
		}
		out = append(out, Mismatch{Kind: it.kind, Policy: pol, Key: it.key, Payload: it.payload, Want: c.want, Got: c.got})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.Payload < b.Payload
	})
	return out
}
