// Package existingapp is an application written before twicekit, as most
// are: a storage layer whose methods take no context, an HTTP client and a
// pool in unexported fields, and a constructor that dials a DSN. Its tests
// (billing_test.go, in the package itself) check its settlement job with
// twicekit without changing it: docs/existing-app.md is the guide.
package existingapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// Store is the app's storage layer, on database/sql, without contexts.
type Store struct{ db *sql.DB }

// NewStore returns the storage layer on db.
func NewStore(db *sql.DB) *Store { return &Store{db: db} }

// RecordPayment marks the invoice paid and records its payment, once: the
// payment's unique invoice refuses a second. It reports whether this call
// recorded it.
func (s *Store) RecordPayment(invoiceID, cents int64) (bool, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	res, err := tx.Exec(`INSERT INTO payments (invoice_id, cents) VALUES ($1, $2) ON CONFLICT (invoice_id) DO NOTHING`, invoiceID, cents)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 1 {
		if _, err := tx.Exec(`UPDATE invoices SET status = 'paid' WHERE id = $1`, invoiceID); err != nil {
			return false, err
		}
	}
	return n == 1, tx.Commit()
}

// Partner is the client of a partner's API, in an unexported field.
type Partner struct {
	client *http.Client
	base   string
}

// NewPartner returns the client of the partner's API at base.
func NewPartner(base string) *Partner {
	return &Partner{client: &http.Client{Timeout: 10 * time.Second}, base: base}
}

// NotifyPaid tells the partner the invoice is paid, under a key derived
// from the invoice: the partner answers a repeat with the first answer.
func (p *Partner) NotifyPaid(ctx context.Context, invoiceID int64) error {
	body, _ := json.Marshal(map[string]int64{"invoice": invoiceID})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/paid", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("invoice-%d-paid", invoiceID))
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("partner: %s", resp.Status)
	}
	return nil
}

// Service settles invoices; its pool is unexported.
type Service struct {
	pool    *pgxpool.Pool
	store   *Store
	partner *Partner
}

// NewService dials the database at dsn, as the app's main does.
func NewService(ctx context.Context, dsn, partnerURL string) (*Service, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return newService(pool, NewStore(stdlib.OpenDBFromPool(pool)), NewPartner(partnerURL)), nil
}

// newService is what NewService builds once it has dialed.
func newService(pool *pgxpool.Pool, store *Store, partner *Partner) *Service {
	return &Service{pool: pool, store: store, partner: partner}
}

// SettleInvoice is the job: record the payment, then tell the partner.
// It tells the partner on every delivery, so a crash between the two still
// tells it; the key makes the repeat harmless.
func (s *Service) SettleInvoice(ctx context.Context, invoiceID int64) error {
	var cents int64
	if err := s.pool.QueryRow(ctx, `SELECT amount_cents FROM invoices WHERE id = $1`, invoiceID).Scan(&cents); err != nil {
		return err
	}
	if _, err := s.store.RecordPayment(invoiceID, cents); err != nil {
		return err
	}
	return s.partner.NotifyPaid(ctx, invoiceID)
}

// SettleInvoiceOnce is SettleInvoice as first written: it tells the partner
// only when this delivery recorded the payment, so a crash between the two
// never tells it.
func (s *Service) SettleInvoiceOnce(ctx context.Context, invoiceID int64) error {
	var cents int64
	if err := s.pool.QueryRow(ctx, `SELECT amount_cents FROM invoices WHERE id = $1`, invoiceID).Scan(&cents); err != nil {
		return err
	}
	recorded, err := s.store.RecordPayment(invoiceID, cents)
	if err != nil || !recorded {
		return err
	}
	return s.partner.NotifyPaid(ctx, invoiceID)
}
