package twice_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// postDefault POSTs body to url through http.DefaultClient, as an SDK built
// with its defaults does, with key as Idempotency-Key when not empty.
func postDefault(ctx context.Context, url, key, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// chargeThenSettle posts a charge through http.DefaultClient, then marks the
// order settled, guarded by the mark.
func chargeThenSettle(url func(a *twice.Attempt) string, key string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		var settled bool
		if err := a.Pool.QueryRow(ctx, `SELECT settled FROM orders WHERE id = 6735`).Scan(&settled); err != nil || settled {
			return err
		}
		if err := postDefault(ctx, url(a), key, `{"amount":1500,"order":6735}`); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
		return err
	}
}

// TestAPostThroughTheDefaultClientIsSeen: a job that posts unkeyed through
// http.DefaultClient to an httptest server of the test is flagged (the
// second post is a duplicate effect); the same job with a stable key
// through the fake provider passes.
func TestAPostThroughTheDefaultClientIsSeen(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer partner.Close()

	buggy := orderJob("charge through http.DefaultClient", chargeThenSettle(func(*twice.Attempt) string { return partner.URL + "/v1/charges" }, ""))
	rep := twice.Check(context.Background(), buggy, twice.Only("crash-after@2"))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: crash after point 2 of 3 was applied (http POST loopback/v1/charges), before the job heard back, then redelivery", f.Headline)
	require.Equal(t, []string{`http POST loopback/v1/charges "{\"amount\":1500,\"order\":6735}": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))
	require.Contains(t, f.Timeline, "http POST loopback/v1/charges")
	require.NotContains(t, rep.String(), partner.URL[len("http://"):], "the loopback port stays out of the report")
	require.GreaterOrEqual(t, posts.Load(), int32(3), "the test's server got every post: the clean runs' and the scenario's two")

	fixed := orderJob("charge through http.DefaultClient", chargeThenSettle(func(a *twice.Attempt) string { return a.Payments + "/v1/charges" }, "order-6735-charge"))
	rep, tokens := findingTokens(t, fixed)
	require.Empty(t, tokens, rep.String())
	require.Len(t, rep.Reference.Effects, 1)
	require.Equal(t, `/v1/charges {"amount":1500,"order":6735}`, rep.Reference.Effects[0].Payload)
}

// TestAnyOtherHostThroughTheDefaultClientIsRefused: through
// http.DefaultTransport with an attempt's context, a host nobody mounted
// fails naming the host and how to mount a fake, https as well; a mounted
// host answers over http; nothing leaves the machine. A request without an
// attempt's context (the test's own) goes through as before.
func TestAnyOtherHostThroughTheDefaultClientIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"http://partner.example/v1/charges", `no fake serves host "partner.example" (POST /v1/charges): a check never sends a request to the network; mount a fake of that API with twice.HTTPHost("partner.example", handler)`},
		{"https://api.partner.example/v1/charges", `twice: POST https://api.partner.example/v1/charges through http.DefaultTransport: a check never sends a request to the network; mount a fake of that API with twice.HTTPHost("api.partner.example", handler) and give the client the base URL http://api.partner.example`},
	} {
		job := orderJob("charge elsewhere", chargeThenSettle(func(*twice.Attempt) string { return tc.url }, "k"))
		rep := twice.Check(context.Background(), job, twice.Only("sequential"))
		require.NoError(t, rep.Err)
		require.NotEmpty(t, rep.Findings, rep.String())
		require.Contains(t, rep.String(), tc.want)
	}

	fake := &partnerAPI{dedupe: true, keys: map[string]bool{}}
	job := orderJob("charge a mounted fake", chargeThenSettle(func(*twice.Attempt) string { return "http://partner.example/v1/charges" }, "order-6735"))
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", fake), twice.Only("crash-after@2"))
	require.True(t, rep.OK(), rep.String())
	require.GreaterOrEqual(t, len(fake.Seen()), 3, "the clean runs' posts and the scenario's two reached the mounted fake")
	require.Contains(t, fake.Seen()[0], "POST partner.example/v1/charges")

	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer own.Close()
	resp, err := http.Get(own.URL)
	require.NoError(t, err, "the test's own request goes through the transport as before")
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, "ok", string(body))
}

// TestParallelChecksKeepTheirDefaultClientRequestsApart: two checks at once
// in one binary, each posting through http.DefaultClient to its own
// server: each check sees its own requests only, by their context.
func TestParallelChecksKeepTheirDefaultClientRequestsApart(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	reps := make([]*twice.Report, 2)
	for i := range reps {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/v1/check-%d", i)
			job := orderJob("parallel", chargeThenSettle(func(*twice.Attempt) string { return srv.URL + path }, ""))
			reps[i] = twice.Check(context.Background(), job, twice.Only("crash-after@2"))
		}()
	}
	wg.Wait()
	for i, rep := range reps {
		require.NoError(t, rep.Err)
		require.Len(t, rep.Findings, 1, rep.String())
		require.Equal(t, []string{fmt.Sprintf(`http POST loopback/v1/check-%d "{\"amount\":1500,\"order\":6735}": want 1, got 2 (exactly-once)`, i)}, mismatchStrings(rep.Findings[0].Effects))
	}
}
