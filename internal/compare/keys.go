package compare

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// keyInLabel finds the Idempotency-Key at the end of a payment point's
// label: "payment POST /v1/payouts (Idempotency-Key k)".
var keyInLabel = regexp.MustCompile(`\(Idempotency-Key (.+)\)$`)

// KeyAliases makes a finding's text the same from run to run when the job
// draws its Idempotency-Keys at random: a key the reference run sent too is
// printed as is; any other key prints as ‹new key N›, numbered in the order
// the scenario first sent it. Labels are rewritten before anything is laid
// out (so columns are measured on what is printed); other text (errors,
// hints) has a key replaced only where it stands alone and is long enough
// not to be mistaken for other words.
type KeyAliases struct {
	alias map[string]string
	bare  []string // aliased keys replaced in free text, longest first
}

// minBareKey is the shortest key replaced in free text.
const minBareKey = 8

// NewKeyAliases aliases the keys of the labels of a scenario's points that
// the labels of the reference run's points do not hold. Each list holds the
// labels of every attempt's points, then of its crash point, attempt by
// attempt.
func NewKeyAliases(ref, labels []string) *KeyAliases {
	stable := map[string]bool{}
	eachKey(ref, func(key string) { stable[key] = true })
	k := &KeyAliases{alias: map[string]string{}}
	eachKey(labels, func(key string) {
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

// eachKey calls f with the key of every payment point's label, in order.
func eachKey(labels []string, f func(key string)) {
	for _, l := range labels {
		if m := keyInLabel.FindStringSubmatch(l); m != nil {
			f(m[1])
		}
	}
}

// Label rewrites the key of one point's label.
func (k *KeyAliases) Label(l string) string {
	m := keyInLabel.FindStringSubmatchIndex(l)
	if m == nil {
		return l
	}
	if a := k.alias[l[m[2]:m[3]]]; a != "" {
		return l[:m[2]] + a + l[m[3]:]
	}
	return l
}

// Text replaces the aliased keys that stand alone in free text.
func (k *KeyAliases) Text(s string) string {
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

// Texts replaces the aliased keys in every string of list.
func (k *KeyAliases) Texts(list []string) []string {
	for i := range list {
		list[i] = k.Text(list[i])
	}
	return list
}

// None reports whether no key is aliased.
func (k *KeyAliases) None() bool { return len(k.alias) == 0 }
