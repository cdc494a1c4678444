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

// The fixed settlement, in the three-line form: keyed credits and a
// checkpoint after each commit pass from every checkpoint, with two
// attempts at once too (a HeartbeatTimeout lets Temporal retry an attempt
// that is still running).
func TestSettleBatch(t *testing.T) {
	twicetemporal.AssertIdempotent(t, twicetemporal.Activity{Schema: batch.Schema, Seed: batch.Seed, Args: []any{batch.Tonight},
		Activity: func(a *twice.Attempt) any { return (&batch.Settler{Pool: a.Pool}).SettleBatch },
		Options:  workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second}})
}

func TestChargeKeyedByAttemptIsFlagged(t *testing.T) {
	rep := twicetemporal.Check(t.Context(), charge(batch.Charger{KeyByAttempt: true}))
	flagged(t, rep, "Temporal retried it")
}

// The fixed charge: its Idempotency-Key is the workflow ID and the
// activity ID, which every retry shares.
func TestChargeCustomer(t *testing.T) {
	twicetemporal.AssertIdempotent(t, charge(batch.Charger{}))
}
