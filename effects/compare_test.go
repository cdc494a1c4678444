package effects_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

func email(to, subject string) effects.Effect {
	return effects.Effect{Kind: "email", Key: to, Payload: subject}
}

func strs(ms []effects.Mismatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.String())
	}
	return out
}

func TestCompare(t *testing.T) {
	receipt := email("ann@example.com", "Your receipt")
	other := email("bob@example.com", "Your receipt")
	pay := func(key, body string) effects.Effect {
		return effects.Effect{Kind: "payment", Key: key, Payload: body}
	}
	tests := []struct {
		name      string
		want, got []effects.Effect
		policies  effects.Policies
		out       []string
	}{
		{name: "equal", want: []effects.Effect{receipt, other}, got: []effects.Effect{other, receipt}},
		{name: "nothing at all"},
		{name: "duplicate, exactly-once", want: []effects.Effect{receipt}, got: []effects.Effect{receipt, receipt},
			out: []string{`email ann@example.com "Your receipt": want 1, got 2 (exactly-once)`}},
		{name: "missing, exactly-once", want: []effects.Effect{receipt}, got: nil,
			out: []string{`email ann@example.com "Your receipt": want 1, got 0 (exactly-once)`}},
		{name: "duplicate, at-least-once", want: []effects.Effect{receipt}, got: []effects.Effect{receipt, receipt, receipt},
			policies: effects.Policies{"email": effects.AtLeastOnce}},
		{name: "missing, at-least-once", want: []effects.Effect{receipt}, got: nil,
			policies: effects.Policies{"email": effects.AtLeastOnce},
			out:      []string{`email ann@example.com "Your receipt": want 1, got 0 (at-least-once)`}},
		{name: "missing, at-most-once", want: []effects.Effect{receipt}, got: nil,
			policies: effects.Policies{"email": effects.AtMostOnce}},
		{name: "duplicate, at-most-once", want: []effects.Effect{receipt}, got: []effects.Effect{receipt, receipt},
			policies: effects.Policies{"email": effects.AtMostOnce},
			out:      []string{`email ann@example.com "Your receipt": want 1, got 2 (at-most-once)`}},
		{name: "unwanted item under every policy", want: []effects.Effect{receipt}, got: []effects.Effect{receipt, other},
			policies: effects.Policies{"email": effects.AtLeastOnce},
			out:      []string{`email bob@example.com "Your receipt": want 0, got 1 (at-least-once)`}},
		{name: "unwanted item, at-most-once", want: nil, got: []effects.Effect{other},
			policies: effects.Policies{"email": effects.AtMostOnce},
			out:      []string{`email bob@example.com "Your receipt": want 0, got 1 (at-most-once)`}},
		{name: "policy is per kind",
			want:     []effects.Effect{receipt, {Kind: "webhook", Key: "https://hooks.example.com/x", Payload: "{}"}},
			got:      []effects.Effect{receipt, receipt, {Kind: "webhook", Key: "https://hooks.example.com/x", Payload: "{}"}, {Kind: "webhook", Key: "https://hooks.example.com/x", Payload: "{}"}},
			policies: effects.Policies{"email": effects.AtLeastOnce},
			out:      []string{`webhook https://hooks.example.com/x "{}": want 1, got 2 (exactly-once)`}},
		{name: "sorted by kind, key, payload",
			want: []effects.Effect{email("b@x", "2"), email("b@x", "1"), email("a@x", "9"), {Kind: "audit", Key: "k", Payload: "p"}},
			got:  nil,
			out: []string{
				`audit k "p": want 1, got 0 (exactly-once)`,
				`email a@x "9": want 1, got 0 (exactly-once)`,
				`email b@x "1": want 1, got 0 (exactly-once)`,
				`email b@x "2": want 1, got 0 (exactly-once)`,
			}},
		{name: "payment keys are ignored: once under a new key matches",
			want: []effects.Effect{pay("uuid-1", `{"amount":8400}`)},
			got:  []effects.Effect{pay("uuid-2", `{"amount":8400}`)}},
		{name: "payment keys are ignored: twice under two keys is a double charge",
			want: []effects.Effect{pay("uuid-1", `{"amount":8400}`)},
			got:  []effects.Effect{pay("uuid-2", `{"amount":8400}`), pay("uuid-3", `{"amount":8400}`)},
			out:  []string{`payment "{\"amount\":8400}": want 1, got 2 (exactly-once)`}},
		{name: "empty key shown", want: []effects.Effect{{Kind: "email", Payload: "x\ny"}},
			out: []string{`email (no key) "x\ny": want 1, got 0 (exactly-once)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := effects.Compare(tt.want, tt.got, tt.policies)
			assert.Equal(t, tt.out, strs(got))
			if tt.out == nil {
				assert.Nil(t, got)
			}
		})
	}
}

func TestCompareFields(t *testing.T) {
	ms := effects.Compare([]effects.Effect{email("ann@example.com", "Hi")}, nil, effects.Policies{"email": effects.AtLeastOnce})
	require.Len(t, ms, 1)
	assert.Equal(t, effects.Mismatch{Kind: "email", Policy: effects.AtLeastOnce, Key: "ann@example.com", Payload: "Hi", Want: 1, Got: 0}, ms[0])
}

func TestPolicy(t *testing.T) {
	for _, p := range []effects.Policy{effects.ExactlyOnce, effects.AtLeastOnce, effects.AtMostOnce} {
		back, err := effects.ParsePolicy(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, back)
	}
	assert.Equal(t, "exactly-once", effects.ExactlyOnce.String())
	assert.Equal(t, "at-least-once", effects.AtLeastOnce.String())
	assert.Equal(t, "at-most-once", effects.AtMostOnce.String())
	assert.Equal(t, "Policy(7)", effects.Policy(7).String())
	_, err := effects.ParsePolicy("twice")
	assert.EqualError(t, err, `effects: unknown policy "twice" (want exactly-once, at-least-once or at-most-once)`)

	var none effects.Policies
	assert.Equal(t, effects.ExactlyOnce, none.For("email"))
	assert.Equal(t, "all exactly-once", none.String())
	ps := effects.Policies{"webhook": effects.AtMostOnce, "email": effects.AtLeastOnce}
	assert.Equal(t, effects.AtLeastOnce, ps.For("email"))
	assert.Equal(t, effects.ExactlyOnce, ps.For("payment"))
	assert.Equal(t, "email: at-least-once, webhook: at-most-once", ps.String())
}
