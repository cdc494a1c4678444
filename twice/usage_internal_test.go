package twice

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrentTokensListEveryInterleavingThatFits(t *testing.T) {
	require.Nil(t, concurrentTokens(0))
	require.Equal(t, []string{"concurrent:AB", "concurrent:BA"}, concurrentTokens(1))
	require.Equal(t, []string{"overlap@1", "concurrent:A2B2", "concurrent:ABAB", "concurrent:AB2A", "concurrent:BA2B", "concurrent:BABA", "concurrent:B2A2"}, concurrentTokens(2))
	require.Len(t, concurrentTokens(3), 2+20)
	require.Equal(t, []string{"overlap@1", "overlap@2", "overlap@3", "concurrent:A4B4 … concurrent:B4A4 (70 interleavings of A's and B's with 4 points each)"}, concurrentTokens(4))
}

func TestCountAgreesWithItsNoun(t *testing.T) {
	require.Equal(t, "0 points", count(0, "point"))
	require.Equal(t, "1 point", count(1, "point"))
	require.Equal(t, "2 points", count(2, "point"))
	require.Equal(t, "1 delivery", count(1, "delivery"))
	require.Equal(t, "5 deliveries", count(5, "delivery"))
	require.Equal(t, "2 keys", count(2, "key"))
}
