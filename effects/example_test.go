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
