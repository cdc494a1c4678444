package twice_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/twice"
)

// An app that builds its own http.Client from a configured base URL is
// seen when the base URL is a.BaseURL(host) (issue 40, item 4).

const chargeBody = `{"amount":1500,"order":6735}`

// postWith POSTs body to url through client, with key as Idempotency-Key
// when not empty, and fails on an answer outside 2xx.
func postWith(ctx context.Context, client *http.Client, url, contentType, key, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s %s", url, resp.Status, answer)
	}
	return answer, nil
}

// partnerClient is the app's own client for the partner's API, built from
// its configured base URL with a transport of its own.
type partnerClient struct {
	base string
	http *http.Client
}

func newPartnerClient(base string) *partnerClient {
	return &partnerClient{base: base, http: &http.Client{Transport: &http.Transport{}}}
}

func (p *partnerClient) charge(ctx context.Context, key string) error {
	_, err := postWith(ctx, p.http, p.base+"/v1/charges", "application/json", key, chargeBody)
	return err
}

// settleThenCharge marks the order settled in a transaction, commits, then
// charges through client, unguarded: every delivery charges.
func settleThenCharge(client func(a *twice.Attempt) *partnerClient, key string) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		tx, err := a.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		return client(a).charge(ctx, key)
	}
}

func ownClient(a *twice.Attempt) *partnerClient {
	return newPartnerClient(a.BaseURL("partner.example"))
}

func attemptClient(a *twice.Attempt) *partnerClient {
	return &partnerClient{base: "http://partner.example", http: a.HTTP}
}

// TestAChargeThroughTheAppsOwnClientIsSeen: the unguarded charge through
// the app's own client is flagged, in the same words as through a.HTTP,
// with no loopback port in the report; on a lost reply the client got an
// error.
func TestAChargeThroughTheAppsOwnClientIsSeen(t *testing.T) {
	t.Parallel()
	fake := &partnerAPI{keys: map[string]bool{}}
	job := orderJob("charge after commit", settleThenCharge(ownClient, ""))
	rep, tokens := findingTokens(t, job, twice.HTTPHost("partner.example", fake), twice.WithoutConcurrency("the sequential scenarios are the point"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "crash-after@4", "reply-lost@4"}, tokens, rep.String())
	points := rep.Reference.Attempts[0].Points
	require.Len(t, points, 4)
	require.Equal(t, "http POST partner.example/v1/charges", points[3].Label)
	require.Equal(t, effects.Origin{JobID: "job-1", Attempt: 1, Point: 4}, rep.Reference.Effects[0].Origin)
	require.Contains(t, fake.Seen()[0], "POST partner.example/v1/charges "+chargeBody+" (job=job-1;attempt=1;point=4)", "the fake sees the host, not the loopback port")
	require.NotContains(t, rep.String(), "127.0.0.1", "the loopback port stays out of the report")

	// The same findings, word for word, as the same job through a.HTTP.
	via := orderJob("charge after commit", settleThenCharge(attemptClient, ""))
	viaRep, viaTokens := findingTokens(t, via, twice.HTTPHost("partner.example", &partnerAPI{keys: map[string]bool{}}), twice.WithoutConcurrency("the sequential scenarios are the point"))
	require.Equal(t, viaTokens, tokens)
	for i, f := range rep.Findings {
		g := viaRep.Findings[i]
		require.Equal(t, g.Headline, f.Headline)
		require.Equal(t, mismatchStrings(g.Effects), mismatchStrings(f.Effects))
		require.Equal(t, g.Hints, f.Hints)
		if f.Token != "reply-lost@4" { // the job's error differs: a closed connection, not a.HTTP's words
			require.Equal(t, g.Timeline, f.Timeline)
		}
	}
	f := rep.Findings[3]
	require.Equal(t, "not idempotent: crash after point 4 of 4 was applied (http POST partner.example/v1/charges), before the job heard back, then redelivery", f.Headline)
	require.Equal(t, []string{`http POST partner.example/v1/charges "{\"amount\":1500,\"order\":6735}": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))

	lost := rep.Findings[4]
	first := scenarioRun(t, rep, "reply-lost@4").Attempts[0]
	require.Error(t, first.Err, "the app's client saw the lost reply as an error")
	require.Equal(t, `Post "http://partner.example/v1/charges": EOF`, first.Err.Error(), "the connection closed with no response, named by its host")
	require.Contains(t, lost.Timeline, `returned error: Post "http://partner.example/v1/charges": EOF`)
}

// scenarioRun is the scenario of rep with token.
func scenarioRun(t *testing.T, rep *twice.Report, token string) *twice.ScenarioRun {
	t.Helper()
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Token() == token {
			return sr
		}
	}
	t.Fatalf("no scenario %s in:\n%s", token, rep.String())
	return nil
}

// TestAKeyTheFakeDeduplicatesPassesThroughTheAppsOwnClient: the twin
// sends a key the fake de-duplicates: its replays are not recorded again,
// and every scenario passes.
func TestAKeyTheFakeDeduplicatesPassesThroughTheAppsOwnClient(t *testing.T) {
	t.Parallel()
	fake := &partnerAPI{dedupe: true, keys: map[string]bool{}}
	job := orderJob("charge after commit, keyed", settleThenCharge(ownClient, "order-6735-charge"))
	rep, tokens := findingTokens(t, job, twice.HTTPHost("partner.example", fake))
	require.Empty(t, tokens, rep.String())
	require.Contains(t, rep.Tokens(), "reply-lost@4")
	require.Equal(t, "http POST partner.example/v1/charges (Idempotency-Key order-6735-charge)", rep.Reference.Attempts[0].Points[3].Label)
	lost := scenarioRun(t, rep, "reply-lost@4")
	require.Len(t, lost.Attempts, 2, "the lost reply failed the first delivery; the second one's charge was replayed")
	require.Error(t, lost.Attempts[0].Err)
	require.Len(t, lost.Effects, 1)
}

// TestAnAppClientKeptAcrossDeliveriesIsSeen: one client for the whole app,
// its connections kept alive from delivery to delivery: every request is
// still the attempt running on the worker, and a lost reply on a reused
// connection is retried by net/http itself (the request carries an
// Idempotency-Key), as in production, then replayed by the fake.
func TestAnAppClientKeptAcrossDeliveriesIsSeen(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		client *partnerClient
	)
	kept := func(a *twice.Attempt) *partnerClient {
		mu.Lock()
		defer mu.Unlock()
		if client == nil {
			client = newPartnerClient(a.BaseURL("partner.example"))
		}
		return client
	}
	fake := &partnerAPI{dedupe: true, keys: map[string]bool{}}
	rep, tokens := findingTokens(t, orderJob("charge with one client", settleThenCharge(kept, "order-6735-charge")),
		twice.HTTPHost("partner.example", fake), twice.WithoutConcurrency("one worker: one client"))
	require.Empty(t, tokens, rep.String())
	client.http.CloseIdleConnections()

	fake = &partnerAPI{keys: map[string]bool{}}
	client = nil
	rep, tokens = findingTokens(t, orderJob("charge with one client, unkeyed", settleThenCharge(kept, "")),
		twice.HTTPHost("partner.example", fake), twice.WithoutConcurrency("one worker: one client"))
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "crash-after@4", "reply-lost@4"}, tokens, rep.String())
	client.http.CloseIdleConnections()
}

// TestBaseURLRequestsAreTheirAttemptsInConcurrentScenarios: in every
// concurrent scenario each attempt's request, through its own client, is
// recorded as that attempt's: the body says which attempt sent it.
func TestBaseURLRequestsAreTheirAttemptsInConcurrentScenarios(t *testing.T) {
	t.Parallel()
	job := orderJob("charge, saying who", func(ctx context.Context, a *twice.Attempt) error {
		var settled bool
		if err := a.Pool.QueryRow(ctx, `SELECT settled FROM orders WHERE id = 6735`).Scan(&settled); err != nil {
			return err
		}
		client := newPartnerClient(a.BaseURL("partner.example"))
		defer client.http.CloseIdleConnections()
		body := fmt.Sprintf(`{"job":%q,"attempt":%d}`, a.JobID, a.Number)
		if _, err := postWith(ctx, client.http, client.base+"/v1/charges", "application/json", "", body); err != nil {
			return err
		}
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
		return err
	})
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", &partnerAPI{keys: map[string]bool{}}),
		twice.EffectPolicy(effects.KindHTTP, effects.AtLeastOnce))
	require.NoError(t, rep.Err)
	concurrentRuns, twoSenders := 0, 0
	for _, sr := range rep.Scenarios {
		if sr.Scenario.Kind != twice.Overlap && sr.Scenario.Kind != twice.Interleaved && sr.Scenario.Kind != twice.DuplicateOverlap {
			continue
		}
		concurrentRuns++
		senders := map[effects.Origin]bool{}
		for _, e := range sr.Effects {
			var sent struct {
				Job     string `json:"job"`
				Attempt int    `json:"attempt"`
			}
			require.NoError(t, json.Unmarshal([]byte(e.Payload), &sent), e.Payload)
			require.Equal(t, [2]any{sent.Job, sent.Attempt}, [2]any{e.Origin.JobID, e.Origin.Attempt},
				"%s: the request of %s attempt %d is recorded as another attempt's", sr.Scenario.Token(), sent.Job, sent.Attempt)
			senders[e.Origin] = true
		}
		if len(senders) >= 2 {
			twoSenders++
		}
		require.Empty(t, sr.Foreign, sr.Scenario.Token())
	}
	require.Positive(t, concurrentRuns, rep.String())
	require.Positive(t, twoSenders, "some concurrent scenario has both attempts' requests")
}

// TestTheProviderThroughTheAppsOwnClient: Stripe-shaped requests, form
// encoded, through the app's own client to a.BaseURL(a.Payments): a
// stable key passes, no key is flagged, in the provider's words.
func TestTheProviderThroughTheAppsOwnClient(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		answers []string
	)
	charge := func(key string) func(ctx context.Context, a *twice.Attempt) error {
		return func(ctx context.Context, a *twice.Attempt) error {
			var settled bool
			if err := a.Pool.QueryRow(ctx, `SELECT settled FROM orders WHERE id = 6735`).Scan(&settled); err != nil || settled {
				return err
			}
			stripe := &http.Client{Transport: &http.Transport{}}
			defer stripe.CloseIdleConnections()
			form := url.Values{"amount": {"1500"}, "currency": {"usd"}, "metadata[order]": {"6735"}}
			answer, err := postWith(ctx, stripe, a.BaseURL(a.Payments)+"/v1/charges", "application/x-www-form-urlencoded", key, form.Encode())
			if err != nil {
				return err
			}
			mu.Lock()
			answers = append(answers, string(answer))
			mu.Unlock()
			_, err = a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
			return err
		}
	}
	rep, tokens := findingTokens(t, orderJob("stripe charge, keyed", charge("order-6735-charge")))
	require.Empty(t, tokens, rep.String())
	require.Equal(t, "payment POST /v1/charges (Idempotency-Key order-6735-charge)", rep.Reference.Attempts[0].Points[1].Label)
	require.Equal(t, `/v1/charges {"amount":1500,"currency":"usd","metadata":{"order":"6735"}}`, rep.Reference.Effects[0].Payload)
	mu.Lock()
	require.Contains(t, answers[0], `"id":"ch_000001"`)
	require.Contains(t, answers[0], `"object":"charge"`)
	mu.Unlock()

	rep = twice.Check(context.Background(), orderJob("stripe charge, no key", charge("")), twice.Only("crash-after@2"))
	require.NoError(t, rep.Err)
	require.Len(t, rep.Findings, 1, rep.String())
	f := rep.Findings[0]
	require.Equal(t, "not idempotent: crash after point 2 of 3 was applied (payment POST /v1/charges (no Idempotency-Key)), before the job heard back, then redelivery", f.Headline)
	require.Equal(t, []string{`payment "/v1/charges {\"amount\":1500,\"currency\":\"usd\",\"metadata\":{\"order\":\"6735\"}}": want 1, got 2 (exactly-once)`}, mismatchStrings(f.Effects))
	require.NotContains(t, rep.String(), "127.0.0.1")
}

// TestABaseURLThroughTheAttemptsClientsIsItsHost: the base URL's requests
// sent through a.HTTP or http.DefaultClient reach the fake once, as a
// request to its host (not to a loopback server, then again).
func TestABaseURLThroughTheAttemptsClientsIsItsHost(t *testing.T) {
	t.Parallel()
	for name, client := range map[string]func(a *twice.Attempt) *http.Client{
		"a.HTTP":             func(a *twice.Attempt) *http.Client { return a.HTTP },
		"http.DefaultClient": func(*twice.Attempt) *http.Client { return http.DefaultClient },
	} {
		job := orderJob("charge through "+name, settleThenCharge(func(a *twice.Attempt) *partnerClient {
			return &partnerClient{base: a.BaseURL("partner.example"), http: client(a)}
		}, ""))
		fake := &partnerAPI{keys: map[string]bool{}}
		rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", fake), twice.Only("crash-after@4"))
		require.NoError(t, rep.Err, name)
		points := rep.Reference.Attempts[0].Points
		require.Len(t, points, 4, "%s: %s", name, rep.String())
		require.Equal(t, "http POST partner.example/v1/charges", points[3].Label, name)
		require.Len(t, rep.Findings, 1, rep.String())
	}
}

// TestABaseURLForAHostNobodyMountedFailsTheCheck: the report's error names
// the host and HTTPHost; the URL given refuses connections; a malformed
// host says what to give.
func TestABaseURLForAHostNobodyMountedFailsTheCheck(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		errs []error
	)
	job := func(host string) twice.Job {
		return orderJob("charge elsewhere", func(ctx context.Context, a *twice.Attempt) error {
			err := newPartnerClient(a.BaseURL(host)).charge(ctx, "")
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return err
		})
	}
	rep := twice.Check(context.Background(), job("elsewhere.example"), twice.Only("sequential"))
	require.Error(t, rep.Err)
	require.Equal(t, `twice: a.BaseURL("elsewhere.example"): no fake serves host "elsewhere.example": mount a fake of that API with twice.HTTPHost("elsewhere.example", handler), or ask for the payment provider's host, "payments.twice.test"`, rep.Err.Error())
	require.Empty(t, rep.Findings)
	require.False(t, rep.OK())
	require.Empty(t, rep.KeptDatabase, "the check's mistake keeps no database")
	mu.Lock()
	require.NotEmpty(t, errs)
	var op *net.OpError
	require.True(t, errors.As(errs[0], &op), "the job's client got a refused connection: %v", errs[0])
	mu.Unlock()

	rep = twice.Check(context.Background(), job("https://partner.example/v1"), twice.HTTPHost("partner.example", &partnerAPI{}), twice.Only("sequential"))
	require.Error(t, rep.Err)
	require.Equal(t, `twice: a.BaseURL("https://partner.example/v1"): give the host alone, such as "partner.example", without scheme or path`, rep.Err.Error())

	var zero twice.Attempt
	require.Equal(t, "http://127.0.0.1:0", zero.BaseURL("partner.example"), "an attempt the check did not make: a URL that refuses, not a panic")
}

// TestTheBaseURLServersCloseWithTheCheck: once the check returned, the
// servers it handed out refuse connections.
func TestTheBaseURLServersCloseWithTheCheck(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		urls = map[string]bool{}
	)
	job := orderJob("charge", settleThenCharge(func(a *twice.Attempt) *partnerClient {
		c := ownClient(a)
		mu.Lock()
		urls[c.base] = true
		mu.Unlock()
		return c
	}, "order-6735-charge"))
	rep := twice.Check(context.Background(), job, twice.HTTPHost("partner.example", &partnerAPI{dedupe: true, keys: map[string]bool{}}), twice.Only("overlap@2"))
	require.NoError(t, rep.Err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, urls, 2, "the check's worker and the concurrent scenario's other worker: a server each")
	for u := range urls {
		_, err := net.Dial("tcp", strings.TrimPrefix(u, "http://"))
		require.Error(t, err, "%s still listens after the check", u)
	}
}
