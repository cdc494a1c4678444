package twice_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// An app that builds its own http.Client from a configured base URL gets
// the attempt's base URL for the partner's host: its requests are points
// and effects, as through a.HTTP, and the report names the host.
func ExampleAttempt_BaseURL() {
	partner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"charged"}`)
	})
	job := orderJob("charge after commit", func(ctx context.Context, a *twice.Attempt) error {
		if _, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
			return err
		}
		base := a.BaseURL("partner.example")                 // in production: the app's setting, https://partner.example
		client := &http.Client{Transport: &http.Transport{}} // the app's own client
		defer client.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/charges", strings.NewReader(`{"order":6735}`))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", partner), twice.Only("sequential"))
	fmt.Println(rep.Reference.Attempts[0].Points[1].Label)
	fmt.Println(rep.Findings[0].Headline)
	fmt.Println(strings.Join(mismatchStrings(rep.Findings[0].Effects), "\n"))
	// Output:
	// http POST partner.example/v1/charges
	// not idempotent: sequential: the ack was lost and the same job was delivered again
	// http POST partner.example/v1/charges "{\"order\":6735}": want 1, got 2 (exactly-once)
}
