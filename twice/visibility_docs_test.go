package twice_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// visibilityCase is one row of a table of docs/visibility.md: the start of
// its first cell, the job the row describes, and the words the row quotes,
// which the row and the job's report must both carry ("…" stands for what
// varies).
type visibilityCase struct {
	row    string
	report func(t *testing.T) string
	quotes []string
}

// tableRows returns the rows of the Markdown table that follows heading in
// doc (the header and its rule left out).
func tableRows(t *testing.T, doc, heading string) []string {
	t.Helper()
	i := strings.Index(doc, heading)
	require.GreaterOrEqual(t, i, 0, "docs/visibility.md has no %q", heading)
	var rows []string
	inTable := false
	for _, line := range strings.Split(doc[i:], "\n") {
		switch {
		case strings.HasPrefix(line, "| "):
			inTable = true
			rows = append(rows, line)
		case inTable:
			return rows[2:]
		}
	}
	return rows[2:]
}

// holds reports whether text carries quote, its parts between "…" in order.
func holds(text, quote string) bool {
	for _, part := range strings.Split(quote, "…") {
		i := strings.Index(text, part)
		if i < 0 {
			return false
		}
		text = text[i+len(part):]
	}
	return true
}

// checkTable holds every row of the table under heading against cases:
// each row has its case and each case its row, and the row and the
// report both carry the case's quotes.
func checkTable(t *testing.T, doc, heading string, cases []visibilityCase) {
	t.Helper()
	rows := tableRows(t, doc, heading)
	require.Len(t, rows, len(cases), "the table under %q and the cases of this test", heading)
	for i, c := range cases {
		row := rows[i]
		require.True(t, strings.HasPrefix(row, "| "+c.row), "row %d of %q is %q, want one starting %q", i+1, heading, row, c.row)
		rep := c.report(t)
		for _, q := range c.quotes {
			require.True(t, holds(row, q), "the docs' row %q does not say %q", c.row, q)
			require.True(t, holds(rep, q), "the report for %q does not say %q:\n%s", c.row, q, rep)
		}
	}
}

func reportOf(t *testing.T, job twice.Job, opts ...twice.Option) string {
	t.Helper()
	rep := twice.Check(context.Background(), job, opts...)
	require.NoError(t, rep.Err)
	require.False(t, rep.OK(), "the job the row describes passed:\n%s", rep)
	var kinds []string
	for _, f := range rep.Findings {
		for _, p := range f.Problems {
			kinds = append(kinds, problemConst[p.Kind])
		}
	}
	return rep.String() + "\nproblem kinds: " + strings.Join(kinds, " ")
}

// problemConst names the problem kinds the tables name, as Go spells them.
var problemConst = map[twice.ProblemKind]string{
	twice.ProblemForeignContext: "ProblemForeignContext", twice.ProblemForeignSession: "ProblemForeignSession",
	twice.ProblemAfterRun: "ProblemAfterRun", twice.ProblemCleanRunFailed: "ProblemCleanRunFailed",
}

// TestVisibilityTablesSayWhatTheCodeDoes holds docs/visibility.md's tables
// against checks of the jobs their rows describe.
func TestVisibilityTablesSayWhatTheCodeDoes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/visibility.md")
	require.NoError(t, err)
	doc := string(b)

	settle := func(ctx context.Context, a *twice.Attempt) error {
		_, err := a.Pool.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
		return err
	}
	counters := pgfixture.SQL(`CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
CREATE TABLE parents (id int PRIMARY KEY);
CREATE TABLE children (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parents)`)
	checkTable(t, doc, "## What the check flags when it cannot see", []visibilityCase{
		{"calls the attempt's handles without a context while its attempt runs", func(t *testing.T) string {
			return reportOf(t, twice.Job{Name: "context-free increment", Schema: counters,
				Seed: twice.SeedSQL(`INSERT INTO counters (id) VALUES (1)`),
				Run: func(ctx context.Context, a *twice.Attempt) error {
					if err := a.Mailer.Send(context.Background(), effects.Email{To: "ops@example.com", Subject: "counted"}); err != nil {
						return err
					}
					_, err := a.DB.Exec(`UPDATE counters SET n = n + 1 WHERE id = 1`) // no context
					return err
				}})
		}, []string{"sequential"}},
		{"sends `ROLLBACK`, `ROLLBACK TO`, `RELEASE` with a context of no attempt", func(t *testing.T) string {
			return reportOf(t, twice.Job{Name: "rollback idiom", Schema: counters,
				Run: func(ctx context.Context, a *twice.Attempt) error {
					tx, err := a.Pool.Begin(ctx)
					if err != nil {
						return err
					}
					defer tx.Rollback(context.Background()) //nolint:errcheck // the idiom
					if _, err := tx.Exec(ctx, `INSERT INTO children (id, parent_id) VALUES (1, 99)`); err != nil {
						return err
					}
					return tx.Commit(ctx)
				}})
		}, []string{"the job failed on a clean run: …", "23503"}},
		{"keeps the context of an earlier delivery", func(t *testing.T) string {
			var (
				mu   sync.Mutex
				kept context.Context
			)
			return reportOf(t, orderJob("kept context", func(ctx context.Context, a *twice.Attempt) error {
				mu.Lock()
				if kept == nil {
					kept = ctx
				}
				k := kept
				mu.Unlock()
				if err := a.Mailer.Send(k, effects.Email{To: "ops@example.com", Subject: "settled"}); err != nil {
					return err
				}
				return settle(ctx, a)
			}))
		}, []string{"… the attempt had already returned; its context is no longer usable"}},
		{"opens its own connection to the check's database", func(t *testing.T) string {
			return reportOf(t, orderJob("own connection", func(ctx context.Context, a *twice.Attempt) error {
				conn, err := pgx.Connect(ctx, a.Pool.Config().ConnString())
				if err != nil {
					return err
				}
				defer conn.Close(context.Background())
				if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
					return err
				}
				return settle(ctx, a)
			}))
		}, []string{"the job opened its own connection to the check's database", "ProblemForeignSession", "its statements are not seen", "application_name"}},
		{"writes on that connection in its clean run, with no statement on its handles", func(t *testing.T) string {
			return reportOf(t, orderJob("own connection only", func(ctx context.Context, a *twice.Attempt) error {
				conn, err := pgx.Connect(ctx, a.Pool.Config().ConnString())
				if err != nil {
					return err
				}
				defer conn.Close(context.Background())
				_, err = conn.Exec(ctx, `UPDATE orders SET settled = true WHERE id = 6735`)
				return err
			}))
		}, []string{"the job opened its own connection to the check's database", "orders"}},
		{"starts a goroutine that keeps using the attempt's handles after `Run` returned", func(t *testing.T) string {
			return reportOf(t, orderJob("after return", auditAfterReturn(false)))
		}, []string{"a goroutine the attempt started kept using its handles after Run returned: the attempt's context ended with Run …", "ProblemAfterRun", "started by "}},
		{"starts a goroutine on a context that outlives the attempt", func(t *testing.T) string {
			return reportOf(t, orderJob("receipt after the ack", receiptAfterCommit(false)), twice.EffectPolicy(effects.KindEmail, effects.AtLeastOnce))
		}, []string{"the worker died after the ack", "no redelivery"}},
	})

	partner := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer partner.Close()
	post := func(url func(a *twice.Attempt) string) twice.Job {
		return orderJob("post", chargeThenSettle(url, ""))
	}
	checkTable(t, doc, "### HTTP the job sends", []visibilityCase{
		{"`a.Payments`", func(t *testing.T) string {
			return reportOf(t, post(func(a *twice.Attempt) string { return a.Payments + "/v1/charges" }), twice.Only("crash-after@2"))
		}, []string{"payment"}},
		{"a host mounted with `twice.HTTPHost(host, h)`, over `http://`", func(t *testing.T) string {
			return reportOf(t, post(func(*twice.Attempt) string { return "http://partner.example/v1/charges" }),
				twice.HTTPHost("partner.example", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), twice.Only("crash-after@2"))
		}, []string{"http", "POST partner.example/v1/…"}},
		{"a loopback server of the test", func(t *testing.T) string {
			return reportOf(t, post(func(*twice.Attempt) string { return partner.URL + "/v1/charges" }), twice.Only("crash-after@2"))
		}, []string{"http", "POST loopback/v1/…"}},
		{"any other host, over `http://`", func(t *testing.T) string {
			return reportOf(t, post(func(*twice.Attempt) string { return "http://partner.example/v1/charges" }), twice.Only("sequential"))
		}, []string{`no fake serves host "…": … mount a fake of that API with twice.HTTPHost("…", handler)`}},
		{"any host over `https://`", func(t *testing.T) string {
			return reportOf(t, post(func(*twice.Attempt) string { return "https://partner.example/v1/charges" }), twice.Only("sequential"))
		}, []string{"… through http.DefaultTransport: … give the client the base URL http://…"}},
	})
}
