package handles

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/inject"
)

func TestDriverURLKeepsTheSessionsSettings(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://u:p@127.0.0.1:5433/db?application_name=twice-worker&sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DriverURL(cfg), "postgres://u:p@127.0.0.1:5433/db?application_name=twice-worker&sslmode=disable"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	cfg.Host, cfg.Password = "/tmp/pg", ""
	if got, want := DriverURL(cfg), "postgres://u@/db?application_name=twice-worker&host=%2Ftmp%2Fpg&port=5433&sslmode=disable"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestTypeHintOnlyForATypePgxDoesNotKnow(t *testing.T) {
	if TypeHint(errors.New("unknown type (OID 16385)")) == "" || TypeHint(errors.New("no rows")) != "" {
		t.Fatal("the hint is for pgx's unknown types only")
	}
	if !strings.Contains(ConnectionsOwner("charge", 2), `"charge" (2 workers`) {
		t.Fatal(ConnectionsOwner("charge", 2))
	}
}

type ctxKey struct{}

// A request carrying an attempt's transport goes through it; any other
// goes to the network as before; https with an attempt's is refused.
func TestTheHookedTransportHandsAnAttemptsRequestsToIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "network") }))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	HookDefaultTransport(tr, func(ctx context.Context) http.RoundTripper {
		rt, _ := ctx.Value(ctxKey{}).(http.RoundTripper)
		return rt
	})
	get := func(ctx context.Context, url string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	if got, err := get(context.Background(), srv.URL); err != nil || got != "network" {
		t.Fatalf("%q %v", got, err)
	}
	fake := httptest.NewRecorder()
	io.WriteString(fake, "fake")
	attempt := context.WithValue(context.Background(), ctxKey{}, roundTrip(func(*http.Request) (*http.Response, error) { return fake.Result(), nil }))
	if got, err := get(attempt, srv.URL); err != nil || got != "fake" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := get(attempt, "https://partner.example/v1"); err == nil || !strings.Contains(err.Error(), `twice.HTTPHost("partner.example", handler)`) {
		t.Fatalf("%v", err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A call carrying no attempt's context while no attempt runs on the worker
// is refused and recorded as foreign.
func TestTheGateRefusesACallBetweenAttempts(t *testing.T) {
	var foreign []string
	g := Gate{Owner: inject.NewOwner(nil), Foreign: func(label string) { foreign = append(foreign, label) }}
	_, err := g.Before(context.Background(), effects.Call{Label: "sms +15550100"})
	if !errors.Is(err, faults.ErrForeignContext) || len(foreign) != 1 || foreign[0] != "sms +15550100" {
		t.Fatalf("%v %q", err, foreign)
	}
	if err := g.After(context.Background(), effects.Call{}); err != nil {
		t.Fatal(err)
	}
}
