package effects_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

func TestLogSeqAndCopy(t *testing.T) {
	l := effects.NewLog()
	assert.Nil(t, l.Effects())
	l.Record(effects.Effect{Kind: "email", Key: "a", Seq: 99})
	e := l.Append(effects.Effect{Kind: "email", Key: "b"})
	assert.Equal(t, 2, e.Seq)
	got := l.Effects()
	require.Len(t, got, 2)
	assert.Equal(t, 1, got[0].Seq, "Record overwrites Seq")
	got[0].Key = "mutated"
	assert.Equal(t, "a", l.Effects()[0].Key, "Effects returns a copy")
	l.Reset()
	assert.Equal(t, 0, l.Len())
	l.Record(effects.Effect{Kind: "email"})
	assert.Equal(t, 1, l.Effects()[0].Seq)
}

func TestLogConcurrent(t *testing.T) {
	l := effects.NewLog()
	const writers, each = 8, 200
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				l.Record(effects.Effect{Kind: "email", Key: fmt.Sprint(w), Payload: fmt.Sprint(i)})
				_ = l.Len()
			}
		}()
	}
	close(start)
	_ = l.Effects() // reading while others write
	wg.Wait()
	got := l.Effects()
	require.Len(t, got, writers*each)
	last := map[string]int{}
	for i, e := range got {
		assert.Equal(t, i+1, e.Seq)
		var n int
		_, _ = fmt.Sscan(e.Payload, &n)
		if prev, ok := last[e.Key]; ok {
			assert.Greater(t, n, prev, "one writer's effects keep their order")
		}
		last[e.Key] = n
	}
}

func TestEffectString(t *testing.T) {
	e := effects.Effect{Kind: "email", Key: "ann@example.com", Payload: "Your receipt\nThanks!", Seq: 3,
		Origin: effects.Origin{JobID: "9812", Attempt: 1, Point: 4}}
	assert.Equal(t, `#3 email ann@example.com "Your receipt\nThanks!" (job 9812 attempt 1 point 4)`, e.String())
	e = effects.Effect{Kind: "payment", Payload: "{}", Seq: 1}
	assert.Equal(t, `#1 payment (no key) "{}" (no origin)`, e.String())
}
