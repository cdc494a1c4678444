package seed

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/pgfixture"
)

// A reference run whose statements the check saw has no unseen writes; one
// whose statements it did not see names the tables it changed.
func TestUnseenNamesTheTablesChangedWithNoStatementSeen(t *testing.T) {
	row := pgfixture.Row{Columns: []string{"id"}, Values: []string{"1"}}
	st := State{compared: pgfixture.NewSnapshot(map[string][]pgfixture.Row{"a": nil, "b": nil})}
	after := pgfixture.NewSnapshot(map[string][]pgfixture.Row{"a": {row}, "b": {row}})
	require.Equal(t, []string{"a", "b"}, st.Unseen([][]faults.Step{nil, {{Kind: faults.Effect}}}, after))
	require.Nil(t, st.Unseen([][]faults.Step{{{Kind: faults.Effect}, {Kind: faults.SQL}}}, after))
	require.Nil(t, st.Unseen(nil, pgfixture.NewSnapshot(map[string][]pgfixture.Row{"a": nil})))
}
