package twice_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// inlinedNow flips the order's flag with SQL that carries the time and a
// fresh uuid inlined as literals, as an ORM that inlines its values (bun)
// writes it: not idempotent, and every run's SQL text differs.
func inlinedNow(ctx context.Context, a *twice.Attempt) error {
	var u [16]byte
	_, _ = rand.Read(u[:])
	id := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	if _, err := a.Pool.Exec(ctx, fmt.Sprintf(`SELECT '%s'::uuid`, id)); err != nil {
		return err
	}
	_, err := a.Pool.Exec(ctx, fmt.Sprintf(`UPDATE orders SET notified = NOT notified WHERE '%s'::timestamptz < now() + interval '1 hour'`,
		time.Now().UTC().Format("2006-01-02 15:04:05.999999-07:00")))
	return err
}

// TestInlinedLiteralsPrintAsPlaceholders: the report of a job whose SQL
// carries inlined times and uuids is the same bytes over 10 runs (text,
// Markdown and JSON), with the literals printed as placeholders.
func TestInlinedLiteralsPrintAsPlaceholders(t *testing.T) {
	t.Parallel()
	var first [3]string
	for i := range 10 {
		rep := twice.Check(context.Background(), orderJob("inlined literals", inlinedNow), twice.WithoutConcurrency("the sequential scenarios show it"))
		require.NoError(t, rep.Err)
		require.NotEmpty(t, rep.Findings, rep.String())
		js, err := rep.JSON()
		require.NoError(t, err)
		got := [3]string{rep.String(), rep.Markdown(), string(js)}
		if i == 0 {
			first = got
			require.Contains(t, got[0], "      1  SELECT '‹uuid 1›'::uuid\n      2  UPDATE orders SET notified = NOT notified WHERE '‹time 1›'::timestamptz…\n")
			continue
		}
		require.Equal(t, first, got, "run %d printed other bytes", i+1)
	}
}

// TestAHeadlineNamesNoRedeliveryItsTimelineLacks: with MaxDeliveries(1) a
// crash is not redelivered, and the headline says so instead of "then
// redelivery".
func TestAHeadlineNamesNoRedeliveryItsTimelineLacks(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), orderJob("flip once", inlinedNow), twice.MaxDeliveries(1), twice.Only("crash@1"))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.NotContains(t, f.Headline, "then redelivery", f.Timeline)
	require.Contains(t, f.Headline, "the queue did not deliver it again")
	require.NotContains(t, f.Timeline, "attempt 2 of job-1")
}
