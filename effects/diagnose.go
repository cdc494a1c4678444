package effects

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Diagnose returns hints that teach the fix for what went wrong with
// payments between the reference run (want) and a scenario (got), given the
// requests the provider rejected in the scenario ([Provider.Rejected]):
//
//   - payments identical except their idempotency keys, more of them than
//     in the reference: "the key changed between attempts (k1, k2): derive
//     it from the job, not the attempt";
//   - payments without a key, more of them than in the reference: send a key
//     derived from the job;
//   - one key applied more than once: the provider had forgotten it (the
//     retry came after its window);
//   - a request rejected for reusing a key with a different body: "the retry
//     computed a different request (amount 8400 → 8450): store what you
//     computed before acting on it".
//
// The hints are deterministic (they follow the order of got, then of
// rejected) and nil when there is nothing to say.
func Diagnose(want, got []Effect, rejected ...Rejection) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	wantN := map[string]int{}
	for _, e := range want {
		if e.Kind == KindPayment {
			wantN[e.Payload]++
		}
	}
	type group struct {
		n       int
		keys    []string // distinct, in order of first use
		perKey  map[string]int
		payload string
	}
	var order []*group
	byPayload := map[string]*group{}
	for _, e := range got {
		if e.Kind != KindPayment {
			continue
		}
		g := byPayload[e.Payload]
		if g == nil {
			g = &group{perKey: map[string]int{}, payload: e.Payload}
			byPayload[e.Payload] = g
			order = append(order, g)
		}
		g.n++
		if g.perKey[e.Key] == 0 {
			g.keys = append(g.keys, e.Key)
		}
		g.perKey[e.Key]++
	}
	for _, g := range order {
		if g.n <= wantN[g.payload] {
			continue
		}
		if len(g.keys) > 1 {
			ks := make([]string, len(g.keys))
			for i, k := range g.keys {
				ks[i] = k
				if k == "" {
					ks[i] = "no key"
				}
			}
			add(fmt.Sprintf("the key changed between attempts (%s): derive it from the job, not the attempt", strings.Join(ks, ", ")))
		}
		for _, k := range g.keys {
			switch n := g.perKey[k]; {
			case n < 2:
			case k == "":
				add(fmt.Sprintf("the same payment was sent %d times without an Idempotency-Key (%s): send a key derived from the job, so the provider drops the retry", n, g.payload))
			default:
				add(fmt.Sprintf("the provider applied key %s %d times: it had forgotten the key (the retry came after its idempotency window)", k, n))
			}
		}
	}
	for _, r := range rejected {
		add(fmt.Sprintf("the retry computed a different request (%s): store what you computed before acting on it", bodyDiff(r.First, r.Got)))
	}
	return out
}

// payloadPath is the path a payment's payload starts with, or payoutsPath.
func payloadPath(payload string) string {
	if path, _, ok := strings.Cut(payload, " "); ok && strings.HasPrefix(path, "/") {
		return path
	}
	return payoutsPath
}

// bodyDiff renders the top-level fields that differ between two canonical
// JSON bodies, sorted by name: "amount 8400 → 8450, currency inr → usd".
func bodyDiff(a, b string) string {
	fa, fb := jsonFields(a), jsonFields(b)
	if fa == nil || fb == nil {
		return strconv.Quote(a) + " → " + strconv.Quote(b)
	}
	var parts []string
	if pa, pb := payloadPath(a), payloadPath(b); pa != pb {
		parts = append(parts, "path "+pa+" → "+pb)
	}
	names := map[string]bool{}
	for k := range fa {
		names[k] = true
	}
	for k := range fb {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		va, vb := fieldText(fa, k), fieldText(fb, k)
		if va != vb {
			parts = append(parts, k+" "+va+" → "+vb)
		}
	}
	if len(parts) == 0 {
		return strconv.Quote(a) + " → " + strconv.Quote(b)
	}
	return strings.Join(parts, ", ")
}

func fieldText(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "(none)"
	}
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Explain says, for one mismatch, which way the job chose to be wrong and
// what would fix it or accept it, in the words of "pick which way you'd
// rather be wrong":
//
//   - more than in the reference (a duplicate): the effect comes before the
//     record that it was done; recording first would lose it instead
//     (at-most-once), declaring the kind at-least-once accepts it;
//   - fewer (a missing effect): the record comes before the effect; acting
//     first would duplicate it instead (at-least-once), declaring the kind
//     at-most-once accepts it;
//   - an effect the reference never made: the retry computed something else.
func Explain(m Mismatch) string {
	what := describe(m.Kind, m.Key, m.Payload, keyCounts(m.Kind))
	switch {
	case m.Want == 0:
		return fmt.Sprintf("%s was never made by the reference run: a retry computed a different %s; store what you computed before acting on it", what, m.Kind)
	case m.Got > m.Want && m.Kind == KindPayment:
		return fmt.Sprintf("%s is made %s here and %s in the reference run: send an Idempotency-Key derived from the job, and redeliver within the provider's window", what, times(m.Got), times(m.Want))
	case m.Got > m.Want:
		return fmt.Sprintf("%s is made %s here and %s in the reference run: the job makes it before recording that it did, so a crash or a lost reply between the two repeats it; record first to lose it instead (at-most-once), or declare %q at-least-once if a rare duplicate beats a missing one", what, times(m.Got), times(m.Want), m.Kind)
	default:
		return fmt.Sprintf("%s is made %s here and %s in the reference run: the job records that it did it before making it, so a crash between the two loses it; make it first to risk a duplicate instead (at-least-once), or declare %q at-most-once if a missing one beats a duplicate", what, times(m.Got), times(m.Want), m.Kind)
	}
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}
