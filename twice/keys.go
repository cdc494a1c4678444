package twice

import (
	"fmt"
	"regexp"
	"strings"
)

// keyInLabel finds the Idempotency-Key in a payment point's label, also when
// a column cut the label short ("…").
var keyInLabel = regexp.MustCompile(`Idempotency-Key ([^\s()…]+)(…?)`)

// keyAliases makes a finding's text the same from run to run when the job
// draws its Idempotency-Keys at random: a key the reference run sent too is
// printed as is; any other key prints as ‹new key N›, numbered in the order
// the scenario first sent it.
type keyAliases struct {
	stable map[string]bool
	alias  map[string]string
	order  []string // aliased keys, first use first
}

func newKeyAliases(ref, sr *scenarioRun) *keyAliases {
	k := &keyAliases{stable: map[string]bool{}, alias: map[string]string{}}
	eachKey(ref, func(key string) { k.stable[key] = true })
	eachKey(sr, func(key string) {
		if k.stable[key] || k.alias[key] != "" {
			return
		}
		k.order = append(k.order, key)
		k.alias[key] = fmt.Sprintf("‹new key %d›", len(k.order))
	})
	return k
}

// eachKey calls f with every key of the run's points, in attempt order.
func eachKey(sr *scenarioRun, f func(key string)) {
	if sr == nil {
		return
	}
	for _, a := range sr.Attempts {
		for _, s := range a.Steps {
			for _, m := range keyInLabel.FindAllStringSubmatch(s.Label, -1) {
				f(m[1])
			}
		}
		for _, m := range keyInLabel.FindAllStringSubmatch(a.CrashAt.Label, -1) {
			f(m[1])
		}
	}
}

// apply replaces the aliased keys in s: in point labels (also when a
// column cut them short), and elsewhere (errors, hints) when the key is long
// enough not to be mistaken for other text.
func (k *keyAliases) apply(s string) string {
	if len(k.alias) == 0 {
		return s
	}
	s = keyInLabel.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyInLabel.FindStringSubmatch(m)
		if a := k.alias[sub[1]]; a != "" {
			return "Idempotency-Key " + a
		}
		if sub[2] == "" {
			return m
		}
		for _, full := range k.order {
			if strings.HasPrefix(full, sub[1]) {
				return "Idempotency-Key " + k.alias[full]
			}
		}
		return m
	})
	for _, key := range k.order {
		if len(key) >= minBareKey {
			s = strings.ReplaceAll(s, key, k.alias[key])
		}
	}
	return s
}

// minBareKey is the shortest key replaced outside a point's label.
const minBareKey = 8

// applyAll replaces the aliased keys in every string of list.
func (k *keyAliases) applyAll(list []string) []string {
	for i := range list {
		list[i] = k.apply(list[i])
	}
	return list
}
