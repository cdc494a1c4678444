package twiceriver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/twicekit/twicekit/internal/docsblock"
)

// The differential suite: every behaviour below runs on a real, started
// river.Client and through the check's model of River, and what each left
// after every delivery (the job's river_job row, the deliveries, the
// application's rows, the follow-up jobs) must be the same. The table in
// docs/river.md is generated from it.

type tenantKey struct{}

func snoozesOfJob(job *river.Job[DiffArgs]) int64 { return snoozesOf(job.Metadata) }

var behaviours = []behaviour{{
	name:      "returns nil",
	checkDoes: "a delivery that succeeded; River completes the job after Work returns, and a crash before that is redelivered (the rescuer)",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "an error, then success",
	checkDoes: "a failed attempt, delivered again (a clean run must succeed at its first attempt)",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if job.Attempt == 1 {
			return errWork
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "errors until MaxAttempts (3)",
	checkDoes: "delivered MaxAttempts times, then reported as never succeeding",
	opts:      &river.InsertOpts{MaxAttempts: 3},
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return errWork
	},
}, {
	name:      "river.JobCancel",
	checkDoes: "the job ends, not delivered again; a clean run that cancels passes",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return river.JobCancel(errors.New("the order was cancelled"))
	},
}, {
	name:      `river.JobSnooze(200ms) once (while job.Metadata's "snoozes" is 0)`,
	checkDoes: `snoozed inside the delivery as River does (attempt given back, "snoozes" counted), run again, not a failure; after 10 snoozes in a row: "snoozed 10 times and never ran its work"`,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if snoozesOfJob(job) == 0 {
			return river.JobSnooze(200 * time.Millisecond)
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "river.JobSnooze(0) once",
	checkDoes: "as JobSnooze(d): run again at once",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if snoozesOfJob(job) == 0 {
			return river.JobSnooze(0)
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "river.JobCompleteTx in the work's transaction",
	checkDoes: "the completion is the ack: once it committed, no scenario delivers the job again (a crash after it loses what came after)",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := credit(ctx, tx, job.Args.OrderID); err != nil {
				return err
			}
			_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
			return err
		})
	},
}, {
	name:      "a panic, then success",
	checkDoes: "the recovered panic is a failed attempt (its line on the timeline), delivered again",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if job.Attempt == 1 {
			panic("no price in the provider's reply")
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "the worker's Timeout (100ms) runs out, then success",
	checkDoes: "Work's context ends at the worker's Timeout (or the config's JobTimeout): a failed attempt, delivered again",
	timeout:   100 * time.Millisecond,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if job.Attempt == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "the config's middleware and hooks: a tenant set around Work, a WorkEnd hook that cancels on the provider's 503",
	checkDoes: "Work runs inside the app's river.Config (Job.Config) as River's executor runs it: middleware around it, WorkBegin and WorkEnd hooks",
	config: func(c *river.Config) {
		c.Middleware = []rivertype.Middleware{river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
			return doInner(context.WithValue(ctx, tenantKey{}, "spice-route"))
		})}
		c.Hooks = []rivertype.Hook{
			river.HookWorkBeginFunc(func(ctx context.Context, job *rivertype.JobRow) error {
				if ctx.Value(tenantKey{}) == nil {
					return errors.New("WorkBegin ran outside the middleware")
				}
				return nil
			}),
			river.HookWorkEndFunc(func(ctx context.Context, job *rivertype.JobRow, err error) error {
				if errors.Is(err, errWork) {
					return river.JobCancel(err)
				}
				return err
			}),
		}
	},
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		if ctx.Value(tenantKey{}) != "spice-route" {
			return errors.New("no tenant: the middleware did not run")
		}
		if job.Attempt == 1 {
			return errWork
		}
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "InsertTx of a follow-up",
	checkDoes: "the follow-up commits (or not) with the work's transaction; compared by kind, args, queue, state",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return followUp(ctx, pool, job, nil, true)
	},
}, {
	name:      "InsertTx of a follow-up with UniqueOpts",
	checkDoes: "as InsertTx; a second insert of it is skipped by River",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return followUp(ctx, pool, job, &river.UniqueOpts{ByArgs: true}, true)
	},
}, {
	name:      "Insert of a follow-up, outside the work's transaction",
	checkDoes: "the follow-up commits at once; a crash after it and a redelivery insert it again",
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return followUp(ctx, pool, job, nil, false)
	},
}, {
	name:          "InsertTx of a follow-up scheduled 30 s later, its worker in the application's Workers (Job.Workers)",
	checkDoes:     "River works the follow-up after the job (on the check's clock, 30 s later, never slept): a real river.Client with the application's Workers; the world is compared once it ran",
	workFollowUps: true,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := credit(ctx, tx, job.Args.OrderID); err != nil {
				return err
			}
			_, err := river.ClientFromContext[pgx.Tx](ctx).InsertTx(ctx, tx, FollowUpArgs{OrderID: job.Args.OrderID},
				&river.InsertOpts{ScheduledAt: time.Now().Add(30 * time.Second)})
			return err
		})
	},
}, {
	name:        "a unique job (UniqueOpts ByArgs) inserted twice",
	checkDoes:   "duplicate-enqueue: River skips the second insert, and only one delivery runs",
	opts:        &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}},
	insertTwice: true,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "found running past RescueStuckJobsAfter and its Timeout (1s), its worker dead",
	checkDoes: "a crashed delivery (or a lost completion) stays running; the next one is the rescuer's: one more error, then run again",
	timeout:   time.Second,
	stuck:     true,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return credit(ctx, pool, job.Args.OrderID)
	},
}, {
	name:      "found running, its worker dead, Timeout -1",
	checkDoes: "River's rescuer never rescues a job without a timeout: after a crash it stays running, never run again (its work lost); and River never runs it twice at once",
	timeout:   -1,
	stuck:     true,
	work: func(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs]) error {
		return credit(ctx, pool, job.Args.OrderID)
	},
}}

// followUp credits the order and inserts a follow-up job, in the work's
// transaction (InsertTx) or before it (Insert).
func followUp(ctx context.Context, pool *pgxpool.Pool, job *river.Job[DiffArgs], unique *river.UniqueOpts, inTx bool) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	opts := &river.InsertOpts{Queue: followUps}
	if unique != nil {
		opts.UniqueOpts = *unique
	}
	args := FollowUpArgs{OrderID: job.Args.OrderID}
	if !inTx {
		if _, err := client.Insert(ctx, args, opts); err != nil {
			return err
		}
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := credit(ctx, tx, job.Args.OrderID); err != nil {
			return err
		}
		if inTx {
			_, err := client.InsertTx(ctx, tx, args, opts)
			return err
		}
		return nil
	})
}

// TestModelAgreesWithRiver runs every behaviour on River's real client and
// through the check's model, and fails on the first delivery where what
// they left differs. It then checks the table in docs/river.md.
func TestModelAgreesWithRiver(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	does := map[string]string{}
	t.Run("behaviours", func(t *testing.T) {
		for _, b := range behaviours {
			t.Run(b.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				real := onRiver(ctx, t, b)
				model := onModel(ctx, t, b)
				for i := range max(len(real), len(model)) {
					var r, m string
					if i < len(real) {
						r = real[i].String()
					}
					if i < len(model) {
						m = model[i].String()
					}
					if r != m {
						t.Fatalf("after delivery %d the model differs from River:\nRiver: %s\nmodel: %s\n(River: %d deliveries; the model: %d)", i+1, r, m, len(real), len(model))
					}
				}
				mu.Lock()
				does[b.name] = riverDoes(real)
				mu.Unlock()
			})
		}
	})
	t.Run("concurrent duplicates", func(t *testing.T) {
		for _, d := range duplicates {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				did := riverTwice(t, d)
				mu.Lock()
				does[d.name] = did
				mu.Unlock()
			})
		}
	})
	if t.Failed() || len(does) < len(behaviours)+len(duplicates) {
		return // a -run that picked some behaviours cannot judge the whole table
	}
	docsblock.Check(t, "../docs/river.md", "twiceriver:differential", docsTable(does))
}

// docsTable is the table of behaviours: what River did, delivery by
// delivery, and what the check does with it.
func docsTable(does map[string]string) string {
	var b strings.Builder
	b.WriteString("| the worker | River does (each delivery's river_job row) | the check does |\n|---|---|---|\n")
	for _, x := range behaviours {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", x.name, strings.ReplaceAll(does[x.name], "|", "\\|"), x.checkDoes)
	}
	for _, x := range duplicates {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", x.name, strings.ReplaceAll(does[x.name], "|", "\\|"), x.checkDoes)
	}
	return b.String()
}
