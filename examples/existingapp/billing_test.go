package existingapp

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }

var schema = pgfixture.SQL(`
CREATE TABLE invoices (id bigint PRIMARY KEY, amount_cents bigint NOT NULL, status text NOT NULL DEFAULT 'open');
CREATE TABLE payments (invoice_id bigint PRIMARY KEY REFERENCES invoices, cents bigint NOT NULL);`)

// settleJob checks one of the service's settlement methods. The test is in
// the app's package, so it builds the service from the attempt's handles
// with the unexported constructor, instead of NewService, which dials a DSN
// the check cannot see.
func settleJob(name string, settle func(*Service, context.Context, int64) error) twice.Job {
	return twice.Job{
		Name:   name,
		Schema: schema,
		Seed:   twice.SeedSQL(`INSERT INTO invoices (id, amount_cents) VALUES (42, 1999)`),
		Run: func(ctx context.Context, a *twice.Attempt) error {
			svc := newService(a.Pool, NewStore(a.DB), &Partner{client: a.HTTP, base: "https://partner.example"})
			return settle(svc, ctx, 42)
		},
	}
}

// partnerAPI is the partner, as its documentation describes it: a repeated
// Idempotency-Key gets the first answer, marked as a replay.
type partnerAPI struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (p *partnerAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := r.Header.Get("Idempotency-Key")
	if p.seen[key] {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	p.seen[key] = true
	w.WriteHeader(http.StatusOK)
}

// Reset forgets every key; the check calls it before each scenario.
func (p *partnerAPI) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = map[string]bool{}
}

func TestSettleInvoice(t *testing.T) {
	t.Parallel()
	twice.AssertIdempotent(t, settleJob("settle invoice", (*Service).SettleInvoice),
		twice.HTTPHost("partner.example", &partnerAPI{seen: map[string]bool{}}))
}

// TestSettleInvoiceOnceNeverTellsThePartner: the first version of the job
// is flagged: after a crash between the commit and the call, the
// redelivery finds the payment recorded and never tells the partner.
func TestSettleInvoiceOnceNeverTellsThePartner(t *testing.T) {
	t.Parallel()
	rep := twice.Check(context.Background(), settleJob("settle invoice once", (*Service).SettleInvoiceOnce),
		twice.HTTPHost("partner.example", &partnerAPI{seen: map[string]bool{}}))
	if rep.OK() {
		t.Fatalf("the job that tells the partner only once it recorded the payment passed:\n%s", rep)
	}
	if rep.Err != nil {
		t.Fatalf("the check failed: %v", rep.Err)
	}
	f := rep.Findings[0]
	if len(f.Effects) == 0 {
		t.Fatalf("the first finding is not about the partner's call:\n%s", rep)
	}
	t.Logf("flagged, as it must be:\n%s", f.Headline)
}
