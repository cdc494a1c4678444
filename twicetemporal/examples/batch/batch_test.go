package batch_test

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
	"github.com/twicekit/twicekit/twicetemporal/examples/batch"
)

// settle is SettleBatch of tonight's batch by st, checked with Temporal's
// semantics.
func settle(st batch.Settler) twicetemporal.Activity {
	return twicetemporal.Activity{Schema: batch.Schema, Seed: batch.Seed, Args: []any{batch.Tonight},
		Activity: func(a *twice.Attempt) any { st.Pool = a.Pool; return st.SettleBatch }}
}

// charge is ChargeCustomer by c in workflow order-9812.
func charge(c batch.Charger) twicetemporal.Activity {
	return twicetemporal.Activity{Args: []any{batch.OrderCharge}, WorkflowID: "order-9812",
		Activity: func(a *twice.Attempt) any { c.HTTP, c.Payments = a.HTTP, a.Payments; return c.ChargeCustomer },
		Options:  workflow.ActivityOptions{ActivityID: "charge", StartToCloseTimeout: time.Minute}}
}

// flagged checks that rep has a finding whose headline holds want.
func flagged(t *testing.T, rep *twice.Report, want string) {
	t.Helper()
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Headline, want) {
			return
		}
	}
	t.Errorf("no finding says %q:\n%s", want, rep)
}

func TestUnkeyedSettlementIsFlagged(t *testing.T) {
	rep := twicetemporal.Check(t.Context(), settle(batch.Settler{Unkeyed: true}))
	flagged(t, rep, "(point RecordHeartbeat 1): the worker died, the attempt timed out (StartToCloseTimeout 10m0s) and Temporal retried it from the last heartbeat that reached the server")
}

func TestCheckpointFirstIsFlagged(t *testing.T) {
	rep := twicetemporal.Check(t.Context(), settle(batch.Settler{CheckpointFirst: true}))
	flagged(t, rep, "(begin): the worker died")
}

func TestKeyedSettlement(t *testing.T) {
	twicetemporal.AssertIdempotent(t, settle(batch.Settler{}))
}

func TestChargeKeyedByAttemptIsFlagged(t *testing.T) {
	rep := twicetemporal.Check(t.Context(), charge(batch.Charger{KeyByAttempt: true}))
	flagged(t, rep, "Temporal retried it")
}

func TestChargeKeyedByWorkflowAndActivity(t *testing.T) {
	twicetemporal.AssertIdempotent(t, charge(batch.Charger{}))
}
