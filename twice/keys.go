package twice

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// keyInLabel finds the Idempotency-Key at the end of a payment point's
// label: "payment POST /v1/payouts (Idempotency-Key k)".
var keyInLabel = regexp.MustCompile(`\(Idempotency-Key (.+)\)$`)

// keyAliases makes a finding's text the same from run to run when the job
// draws its Idempotency-Keys at random: a key the reference run sent too is
// printed as is; any other key prints as ‹new key N›, numbered in the order
// the scenario first sent it. Labels are rewritten before anything is laid
// out (so columns are measured on what is printed); other text (errors,
// hints) has a key replaced only where it stands alone and is long enough
// not to be mistaken for other words.
type keyAliases struct {
	alias map[string]string
	bare  []string // aliased keys replaced in free text, longest first
}

// minBareKey is the shortest key replaced in free text.
const minBareKey = 8

func newKeyAliases(ref, sr *ScenarioRun) *keyAliases {
	stable := map[string]bool{}
	eachKey(ref, func(key string) { stable[key] = true })
	k := &keyAliases{alias: map[string]string{}}
	eachKey(sr, func(key string) {
		if stable[key] || k.alias[key] != "" {
			return
		}
		k.alias[key] = fmt.Sprintf("‹new key %d›", len(k.alias)+1)
		if len(key) >= minBareKey {
			k.bare = append(k.bare, key)
		}
	})
	slices.SortStableFunc(k.bare, func(a, b string) int { return len(b) - len(a) })
	return k
}

// eachKey calls f with the key of every payment point of the run, attempt
// by attempt.
func eachKey(sr *ScenarioRun, f func(key string)) {
	for _, a := range sr.Attempts {
		for _, s := range a.Points {
			if m := keyInLabel.FindStringSubmatch(s.Label); m != nil {
				f(m[1])
			}
		}
		if m := keyInLabel.FindStringSubmatch(a.CrashAt.Label); m != nil {
			f(m[1])
		}
	}
}

// label rewrites the key of one point's label.
func (k *keyAliases) label(l string) string {
	m := keyInLabel.FindStringSubmatchIndex(l)
	if m == nil {
		return l
	}
	if a := k.alias[l[m[2]:m[3]]]; a != "" {
		return l[:m[2]] + a + l[m[3]:]
	}
	return l
}

// text replaces the aliased keys that stand alone in free text.
func (k *keyAliases) text(s string) string {
	for _, key := range k.bare {
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(key)
			alone := (i == 0 || !keyByte(rest[i-1])) && (end == len(rest) || !keyByte(rest[end]))
			b.WriteString(rest[:i])
			if alone {
				b.WriteString(k.alias[key])
			} else {
				b.WriteString(key)
			}
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

// keyByte reports whether c may continue a key (so a match next to it is
// part of a longer word).
func keyByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c == ':' || c == '/' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// texts replaces the aliased keys in every string of list.
func (k *keyAliases) texts(list []string) []string {
	for i := range list {
		list[i] = k.text(list[i])
	}
	return list
}

// run returns a copy of sr for printing, with the keys of its labels,
// errors and outcomes replaced; sr itself is left as it is.
func (k *keyAliases) run(sr *ScenarioRun) *ScenarioRun {
	if len(k.alias) == 0 {
		return sr
	}
	return rewriteRun(sr, k.label, k.text)
}

// rewriteRun returns a copy of sr for printing, with label applied to the
// labels of its points and text to its errors and outcomes; sr itself is
// left as it is.
func rewriteRun(sr *ScenarioRun, label, text func(string) string) *ScenarioRun {
	view := *sr
	view.Attempts = make([]AttemptRecord, len(sr.Attempts))
	for i, a := range sr.Attempts {
		a.Points = slices.Clone(a.Points)
		for j := range a.Points {
			a.Points[j].Label = label(a.Points[j].Label)
		}
		a.CrashAt.Label = label(a.CrashAt.Label)
		a.Reason, a.Panic = text(a.Reason), text(a.Panic)
		if a.Err != nil {
			a.Err = errors.New(text(a.Err.Error()))
		}
		view.Attempts[i] = a
	}
	if it := sr.interleaving; it != nil && it.trace != nil {
		itv := *it
		tr := *it.trace
		tr.Events = slices.Clone(tr.Events)
		for i := range tr.Events {
			tr.Events[i].Step.Label = label(tr.Events[i].Step.Label)
		}
		itv.trace = &tr
		view.interleaving = &itv
	}
	return &view
}
