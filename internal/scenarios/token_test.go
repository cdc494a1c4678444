package scenarios

import (
	"strings"
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

// Only keeps the scenario a token names, none for a concurrent token, and
// lists the tokens when it names none.
func TestOnlyKeepsTheScenarioItNames(t *testing.T) {
	all := []Scenario{{Kind: AckLost}, {Kind: CrashBefore, Point: 2}}
	if kept, _, ok := Only(all, "crash@2"); !ok || len(kept) != 1 || kept[0] != all[1] {
		t.Errorf("crash@2: kept %+v, ok %v", kept, ok)
	}
	if kept, tokens, ok := Only(all, "overlap@1"); !ok || kept != nil || tokens != nil {
		t.Errorf("overlap@1: kept %+v, tokens %v, ok %v", kept, tokens, ok)
	}
	if kept, tokens, ok := Only(all, "crash@3"); ok || kept != nil || strings.Join(tokens, " ") != "sequential crash@2" {
		t.Errorf("crash@3: kept %+v, tokens %v, ok %v", kept, tokens, ok)
	}
}
