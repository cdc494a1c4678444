package compare

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
)

// TestTheDeliveryRecordHintNeedsRecordColumnsOnly: the README's unguarded
// increment (points) gets no delivery-record hint; attempts alone does; a
// row that differs in attempts and points does not.
func TestTheDeliveryRecordHintNeedsRecordColumnsOnly(t *testing.T) {
	row := func(vals ...string) pgfixture.Row {
		return pgfixture.Row{Columns: []string{"id", "attempts", "points"}, Values: vals}
	}
	diff := func(want, got pgfixture.Row) []pgfixture.TableDiff {
		return []pgfixture.TableDiff{{Table: "customers", Missing: []pgfixture.Row{want}, Extra: []pgfixture.Row{got}}}
	}
	require.Nil(t, DeliveryRecordHints(diff(row("77", "1", "50"), row("77", "1", "100"))))
	require.Nil(t, DeliveryRecordHints(diff(row("77", "1", "50"), row("77", "2", "100"))))
	require.Len(t, DeliveryRecordHints(diff(row("77", "1", "50"), row("77", "2", "50"))), 1)
	require.Contains(t, DeliveryRecordHints(diff(row("77", "1", "50"), row("77", "2", "50")))[0], `twice.IgnoreColumns("customers.attempts")`)
}
