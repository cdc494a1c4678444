package serverfacts

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestTheCallersContextEndingIsMarked(t *testing.T) {
	if err := CallerEnded(context.Background()); err != nil {
		t.Fatalf("a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := CallerEnded(ctx)
	if !IsCallerEnded(fmt.Errorf("wrapped: %w", err)) || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestAClosedPoolAndARefusedConnectionAreTold(t *testing.T) {
	if err := ClosedPoolByJob([]Attempt{{Name: "attempt 1 of job-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := ClosedPoolByJob([]Attempt{{}, {ClosedPool: true}}); err != ErrClosedPool {
		t.Fatal(err)
	}
	refused := &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
	err := Refused([]Attempt{{Name: "attempt 1 of job-1", Scenario: "once", Err: errors.New("other")}, {Name: "attempt 2 of job-1", Scenario: "ack-lost", Err: refused}},
		func(err error) error { return fmt.Errorf("explained: %w", err) })
	want := "twice: attempt 2 of job-1 of scenario ack-lost could not connect: explained: : sorry, too many clients already (SQLSTATE 53300)"
	if err == nil || err.Error() != want || !errors.Is(err, refused) {
		t.Fatalf("%v", err)
	}
	if IsInfrastructure(err) || !IsInfrastructure(Infrastructure(err)) {
		t.Fatal("only Infrastructure marks an error")
	}
	gone := WentAway("57P01 terminating connection", errors.New("twice: internal error: resetting the database: x"))
	if !IsInfrastructure(gone) {
		t.Fatal("a server that went away is the infrastructure's")
	}
}
