package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var webhookSchema = pgfixture.SQL(`
CREATE TABLE webhook_deliveries (
  id    bigint PRIMARY KEY,
  state jsonb  NOT NULL
);`)

// recordDelivery records webhook 501 as delivered, with the wall clock's
// reading: {"at": now(), "status": "Finished"}. The buggy twin's redelivery
// finds the record and marks it failed ("already attempted"), changing only
// the status; the fixed one leaves the first record alone.
func recordDelivery(redeliveryFails bool) func(ctx context.Context, a *twice.Attempt) error {
	onConflict := `DO NOTHING`
	if redeliveryFails {
		onConflict = `DO UPDATE SET state = jsonb_set(webhook_deliveries.state, '{status}', '"Failed"')`
	}
	return func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, `INSERT INTO webhook_deliveries (id, state)
VALUES (501, jsonb_build_object('at', now(), 'status', 'Finished', 'tries', jsonb_build_array(jsonb_build_object('at', clock_timestamp(), 'code', 200))))
ON CONFLICT (id) `+onConflict)
		return err
	}
}

// A jsonb column is compared leaf by leaf: its clock readings (state.at,
// state.tries.0.at) differ between two clean runs and compare by shape, its
// status by value, so a redelivery that changes only the status is flagged
// and the report names the status's path.
func TestJSONLeavesThatVaryCompareByShapeTheRestByValue(t *testing.T) {
	t.Parallel()
	job := twice.Job{Name: "record webhook delivery", Schema: webhookSchema, Run: recordDelivery(true)}
	rep, tokens := findingTokens(t, job)
	require.Equal(t, []string{"webhook_deliveries.state.at", "webhook_deliveries.state.tries.0.at"}, rep.Varying)
	require.Contains(t, tokens, "sequential")
	f := rep.Findings[0]
	require.Equal(t, `webhook_deliveries:
  - (id=501, state={"at": "‹time 1›", "tries": [{"at": "‹time 2›", "code": 200}], "status": "Finished"})
  + (id=501, state={"at": "‹time 3›", "tries": [{"at": "‹time 4›", "code": 200}], "status": "Failed"})
`, pgfixture.FormatDiff(f.Database))
	require.Contains(t, f.Hints, `webhook_deliveries.state.status differs: "Finished" in the reference run, "Failed" here`)
	require.True(t, strings.Contains(rep.String(), `webhook_deliveries.state.status differs`), rep.String())

	job = twice.Job{Name: "record webhook delivery once", Schema: webhookSchema, Run: recordDelivery(false)}
	rep, tokens = findingTokens(t, job)
	require.Empty(t, tokens, rep.String())
}
