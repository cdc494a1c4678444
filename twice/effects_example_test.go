package twice_test

import (
	"context"
	"fmt"
	"io"
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
