package twicetemporal_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The activities these tests check, each with a real bug or without it.

var schema = pgfixture.SQL(`
CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL);
CREATE TABLE items (id int PRIMARY KEY, amount int NOT NULL);
CREATE TABLE applied (item int PRIMARY KEY);
CREATE TABLE progress (batch int PRIMARY KEY, last_item int NOT NULL)`)

var seed = twice.SeedSQL(
	`INSERT INTO counters VALUES (1, 0)`,
	`INSERT INTO items VALUES (1, 10), (2, 20), (3, 30)`,
	`INSERT INTO progress VALUES (7, 0)`,
)

// Counter adds one to a counter: an unkeyed increment.
type Counter struct{ Pool *pgxpool.Pool }

func (c *Counter) Add(ctx context.Context, id int) error {
	_, err := c.Pool.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = $1`, id)
	return err
}

// BatchInput is a batch of items to add to counter 1.
type BatchInput struct {
	Batch int
	Items []int
}

// Batch adds each item's amount to counter 1, one transaction per item, and
// records after each item (or before it, HeartbeatFirst) how many items are
// done; a retry resumes after the items its heartbeat details count.
type Batch struct {
	Pool *pgxpool.Pool
	// Keyed: an item's transaction records the item in applied and adds
	// nothing when it is there already.
	Keyed bool
	// HeartbeatFirst records the heartbeat before the item's transaction.
	HeartbeatFirst bool
	// GuardLast skips the item its progress row says was the last applied
	// (the one whose heartbeat may have been lost): a guard for the last
	// checkpoint only. GuardAll skips every item up to it.
	GuardLast, GuardAll bool
}

func (b *Batch) Apply(ctx context.Context, in BatchInput) error {
	done := 0
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &done); err != nil {
			return err
		}
	}
	activity.GetLogger(ctx).Info("batch", "resuming after", done)
	for i := done; i < len(in.Items); i++ {
		if b.HeartbeatFirst {
			activity.RecordHeartbeat(ctx, i+1)
		}
		if err := b.apply(ctx, in.Batch, i+1, in.Items[i]); err != nil {
			return err
		}
		if !b.HeartbeatFirst {
			activity.RecordHeartbeat(ctx, i+1)
		}
	}
	return nil
}

// apply applies the item at position pos of the batch in one transaction.
func (b *Batch) apply(ctx context.Context, batch, pos, item int) error {
	return pgx.BeginFunc(ctx, b.Pool, func(tx pgx.Tx) error {
		if b.Keyed {
			tag, err := tx.Exec(ctx, `INSERT INTO applied VALUES ($1) ON CONFLICT DO NOTHING`, item)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
		}
		if b.GuardLast || b.GuardAll {
			var last int
			if err := tx.QueryRow(ctx, `SELECT last_item FROM progress WHERE batch = $1 FOR UPDATE`, batch).Scan(&last); err != nil {
				return err
			}
			if (b.GuardLast && pos == last) || (b.GuardAll && pos <= last) {
				return nil
			}
			if _, err := tx.Exec(ctx, `UPDATE progress SET last_item = $2 WHERE batch = $1`, batch, pos); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE counters SET n = n + (SELECT amount FROM items WHERE id = $1) WHERE id = 1`, item)
		return err
	})
}

// Refuser refuses its input with an error, non-retryable or not.
type Refuser struct {
	Pool *pgxpool.Pool
	// Type is the error's type; NonRetryable marks it so itself.
	Type         string
	NonRetryable bool
	// OnRetry refuses only retries (attempt 2 on).
	OnRetry bool
}

func (r *Refuser) Refuse(ctx context.Context, id int) error {
	var n int
	if err := r.Pool.QueryRow(ctx, `SELECT n FROM counters WHERE id = $1`, id).Scan(&n); err != nil {
		return err
	}
	if r.OnRetry && activity.GetInfo(ctx).Attempt == 1 {
		return nil
	}
	if r.NonRetryable {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("counter %d is closed", id), r.Type, nil)
	}
	return temporal.NewApplicationError(fmt.Sprintf("counter %d is closed", id), r.Type)
}

// InfoLog keeps what activity.GetInfo said to each attempt.
type InfoLog struct {
	mu    sync.Mutex
	infos []activity.Info
}

func (l *InfoLog) Seen() []activity.Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]activity.Info(nil), l.infos...)
}

// Observed is the counter increment, keyed by its attempt's workflow and
// activity IDs, that logs its info.
type Observed struct {
	Pool *pgxpool.Pool
	Log  *InfoLog
}

func (o *Observed) Add(ctx context.Context, id int) error {
	info := activity.GetInfo(ctx)
	o.Log.mu.Lock()
	o.Log.infos = append(o.Log.infos, info)
	o.Log.mu.Unlock()
	return pgx.BeginFunc(ctx, o.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO applied VALUES (hashtext($1)) ON CONFLICT DO NOTHING`,
			info.WorkflowExecution.ID+"/"+info.ActivityID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE id = $1`, id)
		return err
	})
}

// Progress is a heartbeat's details; note does not survive the data
// converter (JSON), as in production.
type Progress struct {
	Done int
	note string
}

// Resumer records one heartbeat and keeps what each attempt resumed from.
type Resumer struct {
	Pool *pgxpool.Pool
	Seen *[]Progress
	mu   *sync.Mutex
}

func (r *Resumer) Run(ctx context.Context, id int) error {
	if activity.HasHeartbeatDetails(ctx) {
		var p Progress
		if err := activity.GetHeartbeatDetails(ctx, &p); err != nil {
			return err
		}
		r.mu.Lock()
		*r.Seen = append(*r.Seen, p)
		r.mu.Unlock()
	}
	if _, err := r.Pool.Exec(ctx, `SELECT n FROM counters WHERE id = $1`, id); err != nil {
		return err
	}
	activity.RecordHeartbeat(ctx, Progress{Done: 2, note: "in memory only"})
	return nil
}
