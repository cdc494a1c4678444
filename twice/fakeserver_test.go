package twice_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// smsGateway is a fake of a text-message gateway's line protocol: the
// client sends "SEND <number> <text>" and the gateway answers "OK" once it
// sent the message.
func smsGateway(c *twice.FakeConn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		to, text, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "SEND "), " ")
		if !ok {
			_, _ = fmt.Fprint(c, "ERR expected SEND <number> <text>\n")
			continue
		}
		applied := false
		err = c.Effect(c.Context(), "sms", to, text, func(context.Context) error {
			applied = true // a real gateway would send it here
			return nil
		})
		switch {
		case err == nil:
			_, _ = fmt.Fprint(c, "OK\n")
		case applied:
			return // sent, then the attempt died or its reply was lost: no "OK"
		default:
			_, _ = fmt.Fprint(c, "ERR not sent\n")
		}
	}
}

// sendSMS is the app's client of the gateway, built from its address.
func sendSMS(ctx context.Context, addr, to, text string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("sms gateway: %w", err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "SEND %s %s\n", to, text); err != nil {
		return fmt.Errorf("sms gateway: %w", err)
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("sms gateway: %w", err)
	}
	if reply != "OK\n" {
		return fmt.Errorf("sms gateway: %s", strings.TrimSpace(reply))
	}
	return nil
}

// textAfterMark marks the order, commits, then texts on every delivery: a
// redelivery texts again.
func textAfterMark(ctx context.Context, a *twice.Attempt) error {
	if _, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
		return err
	}
	return sendSMS(ctx, a.FakeAddr("sms"), "+15550100", "Order 6735 has shipped")
}

// textOnceMarked marks first and texts only when the mark is new: at most
// once, whatever the queue does.
func textOnceMarked(ctx context.Context, a *twice.Attempt) error {
	tag, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735 AND NOT notified`)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return sendSMS(ctx, a.FakeAddr("sms"), "+15550100", "Order 6735 has shipped")
}

func TestAFakesCallsAreTheAttemptsEffects(t *testing.T) {
	t.Parallel()
	gateway := twice.ServeFake("sms", smsGateway)
	rep, tokens := findingTokens(t, orderJob("text after the mark", textAfterMark), gateway)
	require.Contains(t, tokens, "sequential", rep.String())
	require.Contains(t, tokens, "crash-after@2", rep.String())
	require.Contains(t, tokens, "reply-lost@2", rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: sequential: the ack was lost and the same job was delivered again", f.Headline)
	require.Equal(t, []string{`sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))
	require.Equal(t, `sms +15550100 "Order 6735 has shipped"`, rep.Reference.Attempts[0].Points[1].Label)
	require.Equal(t, effects.Origin{JobID: "job-1", Attempt: 1, Point: 2}, rep.Reference.Effects[0].Origin)
	require.NotContains(t, rep.String(), "bypassed")

	rep, tokens = findingTokens(t, orderJob("text once marked", textOnceMarked), gateway, twice.EffectPolicy("sms", effects.AtMostOnce))
	require.Empty(t, tokens, rep.String())
	require.True(t, rep.OK(), rep.String())
	require.Contains(t, rep.Tokens(), "crash-after@2")
	require.Contains(t, rep.Tokens(), "reply-lost@2")
}

// Each attempt texts a message of its own: in every concurrent scenario
// each message is its own attempt's effect and point, whichever attempt
// reached the gateway first.
func TestConcurrentAttemptsCallTheirOwnFake(t *testing.T) {
	t.Parallel()
	job := orderJob("text from each attempt", func(ctx context.Context, a *twice.Attempt) error {
		var notified bool
		if err := a.Pool.QueryRow(ctx, `SELECT notified FROM orders WHERE id = 6735`).Scan(&notified); err != nil {
			return err
		}
		text := fmt.Sprintf("from-attempt-%d", a.Number)
		if err := sendSMS(ctx, a.FakeAddr("sms"), "+15550100", text); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`)
		return err
	})
	requireOwnEffects(t, job, twice.ServeFake("sms", smsGateway))
}

// requireOwnEffects checks a job of three points (a read, its effect, a
// write) whose attempts each make one effect with "attempt-N" in its
// payload: in the concurrent scenarios where B starts before A's effect
// (the check's overlap@1, and two interleavings), each effect is its own
// attempt's, at a point of that attempt's timeline.
func requireOwnEffects(t *testing.T, job twice.Job, fake twice.Option) {
	t.Helper()
	var runs []*twice.ScenarioRun
	rep := twice.Check(context.Background(), job, fake)
	require.NoError(t, rep.Err)
	runs = append(runs, rep.Scenarios...)
	for _, token := range []string{"concurrent:ABABAB", "concurrent:AB2A2B"} {
		rep := twice.Check(context.Background(), job, fake, twice.Only(token))
		require.NoError(t, rep.Err)
		require.Len(t, rep.Scenarios, 1, token)
		runs = append(runs, rep.Scenarios...)
	}
	var played []string
	for _, sr := range runs {
		if k := sr.Scenario.Kind; k != twice.Interleaved && k != twice.Overlap {
			continue
		}
		var mine []effects.Effect
		for _, e := range sr.Effects {
			if strings.Contains(e.Payload, "attempt-") {
				mine = append(mine, e)
			}
		}
		require.Len(t, mine, 2, "%s: %v", sr.Token(), sr.Effects)
		played = append(played, sr.Token())
		for _, e := range mine {
			want := fmt.Sprintf("attempt-%d", e.Origin.Attempt)
			require.Contains(t, e.Payload, want, "%s: effect %s is not its origin's", sr.Token(), e)
			var rec *twice.AttemptRecord
			for i := range sr.Attempts {
				if sr.Attempts[i].JobID == e.Origin.JobID && sr.Attempts[i].Number == e.Origin.Attempt {
					rec = &sr.Attempts[i]
				}
			}
			require.NotNil(t, rec, "%s: no attempt for %s", sr.Token(), e)
			require.GreaterOrEqual(t, len(rec.Points), e.Origin.Point, sr.Token())
			require.Contains(t, rec.Points[e.Origin.Point-1].Label, want, "%s: attempt %d's timeline", sr.Token(), rec.Number)
		}
	}
	require.Subset(t, played, []string{"overlap@1", "concurrent:ABABAB", "concurrent:AB2A2B"})
}

func TestAnUnknownFakeNameIsTheChecksError(t *testing.T) {
	t.Parallel()
	job := orderJob("text a fake nobody serves", textAfterMark)
	rep := twice.Check(context.Background(), job, twice.WithoutConcurrency("one sequential check shows it"))
	require.Error(t, rep.Err)
	require.Equal(t, `twice: a.FakeAddr("sms"): no fake of that name is served (served: none): pass twice.ServeFake("sms", serve) to the check`, rep.Err.Error())

	rep = twice.Check(context.Background(), job, twice.WithoutConcurrency("one sequential check shows it"), twice.ServeFake("smtp", smsGateway))
	require.Error(t, rep.Err)
	require.Contains(t, rep.Err.Error(), `(served: "smtp")`)
}

func TestBadServeFakeOptionsAreRefused(t *testing.T) {
	t.Parallel()
	job := orderJob("text", textAfterMark)
	for _, c := range []struct {
		opts []twice.Option
		want string
	}{
		{[]twice.Option{twice.ServeFake("", smsGateway)}, "twice: ServeFake: the fake needs a name"},
		{[]twice.Option{twice.ServeFake("sms", nil)}, `twice: ServeFake("sms"): serve is nil`},
		{[]twice.Option{twice.ServeFake("sms", smsGateway), twice.ServeFake("sms", smsGateway)}, `twice: ServeFake("sms") is given twice`},
	} {
		rep := twice.Check(context.Background(), job, c.opts...)
		require.Error(t, rep.Err)
		require.Contains(t, rep.Err.Error(), c.want)
	}
}

// A serve function that panics, or that does not return once its
// connection is closed, is the check's error; the check does not hang on it.
func TestAFakeThatPanicsOrHangsIsReported(t *testing.T) {
	t.Parallel()
	quick := twice.WithoutConcurrency("one sequential check shows it")
	panics := twice.ServeFake("sms", func(c *twice.FakeConn) { panic("the fake broke") })
	rep := twice.Check(context.Background(), orderJob("text", textAfterMark), quick, panics)
	require.Error(t, rep.Err)
	require.Contains(t, rep.Err.Error(), `twice: ServeFake("sms"): the fake's serve function panicked: the fake broke`)

	release := make(chan struct{})
	var returned sync.WaitGroup
	hangs := twice.ServeFake("sms", func(c *twice.FakeConn) {
		returned.Add(1)
		defer returned.Done()
		_, _ = bufio.NewReader(c).ReadString('\n')
		<-release // ignores its closed connection and its context
	})
	started := time.Now()
	rep = twice.Check(context.Background(), orderJob("text", textAfterMark), quick, twice.Only("crash@1"), hangs, twice.AttemptTimeout(time.Second))
	close(release)
	returned.Wait()
	require.Error(t, rep.Err)
	require.Contains(t, rep.Err.Error(), `twice: ServeFake("sms"): a serve function did not return within 2s of the check closing its connection`)
	require.Less(t, time.Since(started), 30*time.Second)
}
