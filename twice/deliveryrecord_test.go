package twice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var deliveryTasksSchema = pgfixture.SQL(`
CREATE TABLE tasks (id bigint PRIMARY KEY, attempts int NOT NULL DEFAULT 0, retry_count int NOT NULL DEFAULT 0, done boolean NOT NULL DEFAULT false);
CREATE TABLE shipments (task_id bigint PRIMARY KEY);`)

// countsItsDeliveries records each delivery in the task's row (attempts,
// and retry_count from the second on), then ships the task once: the
// shipment's key refuses a second one.
func countsItsDeliveries(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `UPDATE tasks SET attempts = attempts + 1, retry_count = retry_count + (attempts > 0)::int WHERE id = 7`); err != nil {
		return err
	}
	if _, err := a.Pool.Exec(ctx, `INSERT INTO shipments VALUES (7) ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, `UPDATE tasks SET done = true WHERE id = 7`)
	return err
}

func deliveryRecordJob(run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: "counts its deliveries", Schema: deliveryTasksSchema, Seed: twice.SeedSQL(`INSERT INTO tasks (id) VALUES (7)`), Run: run}
}

// TestAWorkersOwnRecordOfItsDeliveriesIsNamed: a worker that counts its
// deliveries in the app's table differs from one clean run only in those
// columns; the finding says exactly that, names them and the option that
// leaves them out, and with that option the job passes.
func TestAWorkersOwnRecordOfItsDeliveriesIsNamed(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), deliveryRecordJob(countsItsDeliveries), twice.WithoutConcurrency("the sequential scenarios are this test's subject"))
	require.NoError(t, rep.Err)
	require.NotEmpty(t, rep.Findings, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "sequential", f.Token)
	require.Contains(t, f.Hints, `the rows differ from one clean run only in tasks.attempts, tasks.retry_count: the worker's own record of its deliveries (attempts, retries, the last error), `+
		`which a redelivery changes in production too; if the app keeps that record on purpose, leave it out of the comparison with twice.IgnoreColumns("tasks.attempts", "tasks.retry_count")`)

	rep = twice.Check(context.Background(), deliveryRecordJob(countsItsDeliveries), twice.WithoutConcurrency("the sequential scenarios are this test's subject"),
		twice.IgnoreColumns("tasks.attempts", "tasks.retry_count"))
	require.True(t, rep.OK(), rep.String())
}

// TestAnUnguardedIncrementIsNotCalledADeliveryRecord: a finding whose rows
// differ beside the delivery record (a second shipment) gets no such hint.
func TestAnUnguardedIncrementIsNotCalledADeliveryRecord(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), deliveryRecordJob(func(ctx context.Context, a *twice.Attempt) error {
		if err := countsItsDeliveries(ctx, a); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `INSERT INTO shipments VALUES ((SELECT count(*) + 100 FROM shipments))`)
		return err
	}), twice.WithoutConcurrency("the sequential scenarios are this test's subject"))
	require.NoError(t, rep.Err)
	require.NotEmpty(t, rep.Findings, rep.String())
	withShipments := 0
	for _, f := range rep.Findings {
		tables := ""
		for _, d := range f.Database {
			tables += d.Table + " "
		}
		if !strings.Contains(tables, "shipments") {
			continue // crash@2: the redelivery shipped as the clean run did; only the record differs
		}
		withShipments++
		for _, h := range f.Hints {
			require.False(t, strings.Contains(h, "record of its deliveries"), "%s: %s", f.Token, h)
		}
	}
	require.NotZero(t, withShipments, rep.String())
}
