package orderstatus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/orderstatus"
	"github.com/twicekit/twicekit/twice"
)

func TestAdvanceSkipsPastDelivered(t *testing.T) {
	t.Parallel()
	rep := check(t, orderstatus.AdvanceJob())
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue"}, story.Sequential(rep), rep.String())
	for _, tok := range story.Sequential(rep) {
		f := story.Find(rep, tok)
		require.Equal(t, []string{"orders"}, story.Tables(f), tok)
		require.Equal(t, "(id=9812, status='delivered')", f.Database[0].Missing[0].String(), tok)
		require.Equal(t, "(id=9812, status='closed')", f.Database[0].Extra[0].String(), tok)
	}
}

func TestMakeDeliveredIsIdempotent(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, orderstatus.MakeDeliveredJob())
}
