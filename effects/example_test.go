package effects_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/twicekit/twicekit/effects"
)

func ExampleCompare() {
	receipt := effects.Effect{Kind: "email", Key: "ann@example.com", Payload: "Your receipt"}
	want := []effects.Effect{receipt}         // the reference run
	got := []effects.Effect{receipt, receipt} // a crash between "send" and "mark sent", then redelivery

	for _, m := range effects.Compare(want, got, nil) {
		fmt.Println(m)
	}
	// A rare duplicate receipt beats a missing one: declare it.
	fmt.Println(effects.Compare(want, got, effects.Policies{"email": effects.AtLeastOnce}) == nil)
	// Output:
	// email ann@example.com "Your receipt": want 1, got 2 (exactly-once)
	// true
}

func ExampleMailer() {
	log := effects.NewLog()
	mailer := effects.NewMailer(log, nil) // the harness passes its gate
	_ = mailer.Send(context.Background(), effects.Email{To: "ann@example.com", Subject: "Your receipt", Body: "Thanks!"})
	for _, e := range log.Effects() {
		fmt.Println(e)
	}
	// Output:
	// #1 email ann@example.com "Your receipt\nThanks!" (no origin)
}

func ExampleProvider() {
	clock := time.Date(2026, 10, 12, 9, 0, 0, 0, time.UTC)
	log := effects.NewLog()
	p := effects.NewProvider(log, func() time.Time { return clock })
	defer p.Close()
	client := p.Client(nil) // the harness passes its gate

	pay := func(amount int) {
		req, _ := http.NewRequest(http.MethodPost, p.URL()+"/v1/payouts",
			strings.NewReader(fmt.Sprintf(`{"amount":%d,"currency":"inr"}`, amount)))
		req.Header.Set("Idempotency-Key", "payout-restaurant-381-2026-W42")
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d replayed=%q %s", resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), body)
	}
	pay(8400)
	pay(8400) // a retry: replayed, nothing applied
	pay(8450) // a retry that computed another amount: rejected
	fmt.Println(len(p.Applied()), "applied")
	fmt.Println(effects.Diagnose(log.Effects(), log.Effects(), p.Rejected()...)[0])
	// Output:
	// 200 replayed="" {"amount":8400,"currency":"inr","id":"po_000001","object":"payout","status":"paid"}
	// 200 replayed="true" {"amount":8400,"currency":"inr","id":"po_000001","object":"payout","status":"paid"}
	// 422 replayed="" {"error":{"message":"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'payout-restaurant-381-2026-W42' if you meant to execute a different request.","type":"idempotency_error"}}
	// 1 applied
	// the retry computed a different request (amount 8400 → 8450): store what you computed before acting on it
}

// Any effect of the app's own kind: kind, key, payload and the function
// that performs it. The harness passes its gate, which makes each call a
// point it can crash around.
func ExampleRecorder_Do() {
	log := effects.NewLog()
	rec := effects.NewRecorder(log, nil)
	ctx := context.Background()
	_ = rec.Do(ctx, "sms", "+15550100", "Order 6735 has shipped", func(ctx context.Context) error {
		return nil // the real call: the SMS gateway's client
	})
	_ = rec.Do(ctx, "publish", "orders.shipped", map[string]any{"order": 6735}, nil)
	for _, e := range log.Effects() {
		fmt.Println(e)
	}
	// Output:
	// #1 sms +15550100 "Order 6735 has shipped" (no origin)
	// #2 publish orders.shipped "{\"order\":6735}" (no origin)
}

// A Router sends an attempt's HTTP requests to the handlers mounted by host
// (and to the provider); a request to any other host never leaves.
func ExampleRouter() {
	log := effects.NewLog()
	r := effects.NewRouter(log, nil, nil)
	_ = r.Mount("partner.example", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, `{"status":"booked"}`)
	}))
	client := r.Client()

	resp, err := client.Post("https://partner.example/v1/bookings", "application/json", strings.NewReader(`{"order": 6735}`))
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	_, err = client.Get("https://api.elsewhere.example/v1/status")
	fmt.Println(err != nil)
	for _, e := range log.Effects() {
		fmt.Println(e)
	}
	// Output:
	// 200 {"status":"booked"}
	// true
	// #1 http POST partner.example/v1/bookings "{\"order\":6735}" (no origin)
}

// The provider speaks Stripe's dialect on every /v1 path: form-encoded
// bodies as stripe-go sends them, Stripe-shaped objects with numbered ids.
func ExampleProvider_stripe() {
	clock := time.Date(2026, 10, 12, 9, 0, 0, 0, time.UTC)
	p := effects.NewProvider(effects.NewLog(), func() time.Time { return clock })
	defer p.Close()
	client := p.Client(nil)
	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/v1/refunds", strings.NewReader("charge=ch_6735&amount=2000&metadata[order]=6735"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", "refund-order-6735")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// {"amount":2000,"charge":"ch_6735","created":1791795600,"id":"re_000001","livemode":false,"metadata":{"order":"6735"},"object":"refund","status":"succeeded"}
}
