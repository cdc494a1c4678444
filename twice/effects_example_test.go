package twice_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// A text message is an effect of the app's own kind: the app's SMS
// interface gets one adapter method that calls a.Effect, and the check
// gives the "sms" kind every effect scenario.
func ExampleAttempt_Effect() {
	job := orderJob("text, then mark", func(ctx context.Context, a *twice.Attempt) error {
		return notifyShipped(ctx, smsFake{a}, a) // smsFake.SendSMS: return f.a.Effect(ctx, "sms", to, text, nil)
	})
	quick := twice.WithoutConcurrency("the example shows the sequential scenarios")
	rep := twice.Check(context.Background(), job, quick)
	for _, f := range rep.Findings {
		fmt.Println(f.Token, strings.Join(mismatchStrings(f.Effects), "; "))
	}
	rep = twice.Check(context.Background(), job, quick, twice.EffectPolicy("sms", effects.AtLeastOnce))
	fmt.Println("at-least-once:", rep.OK())
	// Output:
	// crash@3 sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// crash-after@2 sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// reply-lost@2 sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// at-least-once: true
}

// A fake of a partner's API is any http.Handler mounted under its host:
// the job's HTTP code reaches it through a.HTTP with only its base URL
// changed. Another host is refused, naming it.
func ExampleHTTPHost() {
	carrier := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"booked"}`)
	})
	run := func(base string) func(ctx context.Context, a *twice.Attempt) error {
		return func(ctx context.Context, a *twice.Attempt) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/bookings", strings.NewReader(`{"order":6735}`))
			if err != nil {
				return err
			}
			resp, err := a.HTTP.Do(req) // with the attempt's ctx, as every effect call
			if err != nil {
				return err
			}
			return resp.Body.Close()
		}
	}
	ctx := context.Background()
	quick := twice.WithoutConcurrency("the example shows one request")
	rep := twice.Check(ctx, orderJob("book", run("https://carrier.example")), quick, twice.HTTPHost("carrier.example", carrier))
	fmt.Println(rep.Reference.Effects[0].Kind, rep.Reference.Effects[0].Key, rep.Reference.Effects[0].Payload)

	rep = twice.Check(ctx, orderJob("book elsewhere", run("https://api.carrier.example")), quick)
	problem, _, _ := strings.Cut(rep.Findings[0].Problems[0].Text, ": a check never")
	fmt.Println(problem)
	// Output:
	// http POST carrier.example/v1/bookings {"order":6735}
	// the job failed on a clean run: Post "https://api.carrier.example/v1/bookings": effects: no fake serves host "api.carrier.example" (POST /v1/bookings)
}

// A fake of any protocol is a function that serves one connection: here a
// text-message gateway speaking "SEND <number> <text>", answered "OK". The
// job dials a.FakeAddr("sms"), where its configuration would name the
// gateway's host and port, and every SEND is a point and an effect of the
// attempt that sent it.
func ExampleServeFake() {
	gateway := twice.ServeFake("sms", func(c *twice.FakeConn) {
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			to, text, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "SEND "), " ")
			applied := false
			err = c.Effect(c.Context(), "sms", to, text, func(context.Context) error {
				applied = true
				return nil
			})
			switch {
			case err == nil:
				_, _ = fmt.Fprint(c, "OK\n")
			case applied:
				return // sent, but the attempt died or its reply was lost: close, no "OK"
			default:
				_, _ = fmt.Fprint(c, "ERR not sent\n")
			}
		}
	})
	job := orderJob("mark, then text", func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET notified = true WHERE id = 6735`); err != nil {
			return err
		}
		conn, err := new(net.Dialer).DialContext(ctx, "tcp", a.FakeAddr("sms"))
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := fmt.Fprint(conn, "SEND +15550100 Order 6735 has shipped\n"); err != nil {
			return err
		}
		if reply, err := bufio.NewReader(conn).ReadString('\n'); err != nil || reply != "OK\n" {
			return fmt.Errorf("sms gateway: %q %v", reply, err)
		}
		return nil
	})
	rep := twice.Check(context.Background(), job, gateway, twice.WithoutConcurrency("the example shows the sequential scenarios"))
	fmt.Println(rep.Reference.Attempts[0].Points[1].Label)
	for _, f := range rep.Findings {
		fmt.Println(f.Token, strings.Join(mismatchStrings(f.Effects), "; "))
	}
	// Output:
	// sms +15550100 "Order 6735 has shipped"
	// sequential sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// crash@end sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// duplicate-enqueue sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// crash-after@2 sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
	// reply-lost@2 sms +15550100 "Order 6735 has shipped": want 1, got 2 (exactly-once)
}
