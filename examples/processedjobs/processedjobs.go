// Package processedjobs is the first source document's general version of
// the ledger: a processed_jobs table with a unique key, inserted in the same
// transaction as the job's database writes; the job skips its work when the
// key is already there. It works for any job whose effects all live in your
// database — if the key really identifies the work.
//
//   - [ByJobIDJob] keys by the queue's job ID. Redeliveries keep the job ID,
//     so crashes, lost acks and overlapping deliveries are all safe. But a
//     producer that enqueued the same payload twice (its call to the queue
//     timed out and it retried; the first call had worked) made two jobs
//     with two IDs, and both give the points: the check's duplicate-enqueue
//     scenario flags it.
//   - [ByOrderIDJob] keys by what the job is about ("reward-order-9812"), so
//     a duplicate enqueue is recognised too.
//   - Or keep the job-ID key and say why the producer cannot enqueue twice,
//     with twice.WithoutDuplicateEnqueue — for example when the job is
//     enqueued in the same transaction as the order ([TransactionalEnqueue]).
//
// The jobs use a pgx transaction (pgx.BeginFunc on Attempt.Pool).
package processedjobs

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

//go:embed schema.sql
var schemaFS embed.FS

// Schema is the story's schema: customers and processed_jobs.
var Schema = pgfixture.FS(schemaFS)

// Seed is the data every scenario starts from.
var Seed = twice.SeedSQL(`INSERT INTO customers (id, points) VALUES (77, 120), (78, 40)`)

// RewardOrder is the job's payload.
type RewardOrder struct{ CustomerID, OrderID int64 }

// Order9812 is the payload every form is checked with.
var Order9812 = RewardOrder{CustomerID: 77, OrderID: 9812}

// Run gives the order's 50 points once per key: it records key in
// processed_jobs and adds the points in one transaction, and does nothing
// when the key was recorded before.
func (p RewardOrder) Run(ctx context.Context, a *twice.Attempt, key string) error {
	return pgx.BeginFunc(ctx, a.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO processed_jobs (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, key)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil // processed before
		}
		_, err = tx.Exec(ctx, `UPDATE customers SET points = points + 50 WHERE id = $1`, p.CustomerID)
		return err
	})
}

// ByJobID keys by the queue's job ID.
func (p RewardOrder) ByJobID(ctx context.Context, a *twice.Attempt) error {
	return p.Run(ctx, a, a.JobID)
}

// ByOrderID keys by the order the job rewards.
func (p RewardOrder) ByOrderID(ctx context.Context, a *twice.Attempt) error {
	return p.Run(ctx, a, fmt.Sprintf("reward-order-%d", p.OrderID))
}

func job(name string, run func(context.Context, *twice.Attempt) error) twice.Job {
	return twice.Job{Name: name, Schema: Schema, Seed: Seed, Run: run}
}

// ByJobIDJob rewards order 9812, keyed by the job ID.
func ByJobIDJob() twice.Job { return job("processed_jobs: keyed by job ID", Order9812.ByJobID) }

// ByOrderIDJob rewards order 9812, keyed by the order.
func ByOrderIDJob() twice.Job { return job("processed_jobs: keyed by order", Order9812.ByOrderID) }

// TransactionalEnqueue is the option for a producer that cannot enqueue
// twice: the check leaves out its duplicate-enqueue scenario and prints the
// reason with every report.
var TransactionalEnqueue = twice.WithoutDuplicateEnqueue(
	"the job is enqueued in the same transaction as the order (a transactional outbox), so the producer cannot enqueue it twice")

// Forms lists the story's forms with what the check is expected to say.
func Forms() []story.Form {
	return []story.Form{{
		Story: "processedjobs", Name: "by-job-id", Job: ByJobIDJob(),
		Flagged: []string{"duplicate-enqueue"},
		Lesson:  "keyed by job ID: safe for redelivery, not for a producer that enqueues the same payload twice",
	}, {
		Story: "processedjobs", Name: "by-order-id", Job: ByOrderIDJob(),
		Lesson: "keyed by the order: a duplicate enqueue is the same work, and is skipped",
	}, {
		Story: "processedjobs", Name: "by-job-id+transactional-enqueue", Job: ByJobIDJob(),
		Options: []twice.Option{TransactionalEnqueue},
		Lesson:  "keyed by job ID, with a producer that cannot enqueue twice (and says why)",
	}}
}
