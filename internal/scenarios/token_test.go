package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrentTokensListEveryInterleavingThatFits(t *testing.T) {
	require.Nil(t, ConcurrentTokens(0))
	require.Equal(t, []string{"concurrent:AB", "concurrent:BA"}, ConcurrentTokens(1))
	require.Equal(t, []string{"overlap@1", "concurrent:A2B2", "concurrent:ABAB", "concurrent:AB2A", "concurrent:BA2B", "concurrent:BABA", "concurrent:B2A2"}, ConcurrentTokens(2))
	require.Len(t, ConcurrentTokens(3), 2+20)
	require.Equal(t, []string{"overlap@1", "overlap@2", "overlap@3", "concurrent:A4B4 … concurrent:B4A4 (70 interleavings of A's and B's with 4 points each)"}, ConcurrentTokens(4))
}
