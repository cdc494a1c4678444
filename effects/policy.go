package effects

import (
	"fmt"
	"sort"
)

// Policy is the promise a job makes about one kind of effect under
// redelivery, crashes and concurrency.
type Policy int

const (
	// ExactlyOnce: every effect of the reference run happens as many times
	// as in the reference, and nothing else happens. The default.
	ExactlyOnce Policy = iota
	// AtLeastOnce: every effect of the reference happens at least as many
	// times as in the reference (duplicates are accepted), and nothing the
	// reference did not do happens. "A rare duplicate receipt beats a
	// missing one."
	AtLeastOnce
	// AtMostOnce: no effect happens more times than in the reference
	// (losing one is accepted), and nothing the reference did not do
	// happens. "A missing invoice beats a duplicate one."
	AtMostOnce
)

// String returns "exactly-once", "at-least-once" or "at-most-once".
func (p Policy) String() string {
	switch p {
	case ExactlyOnce:
		return "exactly-once"
	case AtLeastOnce:
		return "at-least-once"
	case AtMostOnce:
		return "at-most-once"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy is the inverse of [Policy.String].
func ParsePolicy(s string) (Policy, error) {
	for _, p := range []Policy{ExactlyOnce, AtLeastOnce, AtMostOnce} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("effects: unknown policy %q (want exactly-once, at-least-once or at-most-once)", s)
}

// holds reports whether a (kind, key, payload) made got times, when the
// reference made it want times, keeps the policy.
func (p Policy) holds(want, got int) bool {
	if want == 0 {
		return got == 0 // nothing the reference did not do, under every policy
	}
	switch p {
	case AtLeastOnce:
		return got >= want
	case AtMostOnce:
		return got <= want
	default:
		return got == want
	}
}

// Policies gives the policy of each effect kind. A kind that is missing (and
// a nil Policies) means [ExactlyOnce].
type Policies map[string]Policy

// For returns the policy of kind.
func (ps Policies) For(kind string) Policy {
	if p, ok := ps[kind]; ok {
		return p
	}
	return ExactlyOnce
}

// String renders the declared policies sorted by kind, e.g.
// "email: at-least-once, webhook: at-most-once", or "all exactly-once".
func (ps Policies) String() string {
	kinds := make([]string, 0, len(ps))
	for k := range ps {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	s := ""
	for _, k := range kinds {
		if s != "" {
			s += ", "
		}
		s += k + ": " + ps[k].String()
	}
	if s == "" {
		return "all exactly-once"
	}
	return s
}
