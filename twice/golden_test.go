package twice_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/twice"
)

var update = flag.Bool("update", false, "rewrite the golden failure messages in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./twice -run %s -update to write it", t.Name())
	require.Equal(t, string(want), got)
}

// TestAssertFailsWithTheReport: AssertIdempotent fails a broken job's test
// with Fatalf and the golden report, and logs the kept database's URL.
// ExpectIdempotent, on the same path, fails with Errorf and the same text:
// shown on the first case, and on every case with the long tests.
func TestAssertFailsWithTheReport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		job  twice.Job
		opts []twice.Option
	}{
		{"two_statements", loyaltyJob("ledger, two statements", ledgerTwoStatements), nil},
		{"increment", loyaltyJob("increment points", incrementPoints), nil},
		{"send_then_mark", ordersJob("receipt: send, then mark", sendThenMark), nil},
		{"mark_then_send", ordersJob("invoice: mark, then send", markThenSend), []twice.Option{twice.Normalize("invoices.email_sent_at", setOrNull)}},
		{"panics", loyaltyJob("panics", panics), nil},
		{"background_context", loyaltyJob("background ctx", backgroundContext), nil},
		{"unguarded_now", varyingJob("ship order 11, unguarded", shipUnguardedSQL), nil},
		{"email_with_now", shipAndEmail(false), []twice.Option{twice.WithoutConcurrency("sequential is enough")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := &fakeTB{name: "TestRewardOrder/" + c.name}
			twice.AssertIdempotent(tb, c.job, c.opts...)
			require.Empty(t, tb.errors, "AssertIdempotent fails with Fatalf only")
			require.Len(t, tb.fatals, 1)
			logs := quietLogs(tb.logs)
			require.Len(t, logs, 1)
			require.True(t, strings.HasPrefix(logs[0], "twice: kept the check's database for inspection: postgres://"), logs[0])
			golden(t, c.name+".txt", tb.fatals[0]+"\n")

			if c.name != cases[0].name && !longtest.Enabled() {
				return // ExpectIdempotent shares AssertIdempotent's path: the first case shows it, the long tests every case
			}
			tb = &fakeTB{name: "TestRewardOrder/" + c.name}
			require.False(t, twice.ExpectIdempotent(tb, c.job, c.opts...))
			require.Empty(t, tb.fatals, "ExpectIdempotent fails with Errorf only")
			require.Len(t, tb.errors, 1)
			golden(t, c.name+".txt", tb.errors[0]+"\n")
		})
	}
}

func TestAssertPassesQuietly(t *testing.T) {
	t.Parallel()
	tb := &fakeTB{name: "TestRewardOrder"}
	twice.AssertIdempotent(tb, loyaltyJob("ledger CTE", ledgerCTE))
	require.True(t, twice.ExpectIdempotent(tb, ordersJob("receipt", sendThenMark), twice.EffectPolicy("email", effects.AtLeastOnce)))
	require.Empty(t, tb.fatals)
	require.Empty(t, tb.errors)
	require.Empty(t, quietLogs(tb.logs))
}

// quietLogs is what the assertions log without go test -v: under -v they
// also log the PostgreSQL in use (once per binary), the check's size ("N
// scenarios, about T each"), the varying values and a passing check's
// coverage, which these tests do not compare.
func quietLogs(logs []string) []string {
	if !testing.Verbose() {
		return logs
	}
	var out []string
	for _, l := range logs {
		if strings.HasPrefix(l, "twice: PostgreSQL: ") || strings.Contains(l, ": compared by shape (") || strings.Contains(l, ": idempotent in ") ||
			(strings.Contains(l, ", about ") && strings.HasSuffix(l, " each")) {
			continue
		}
		out = append(out, l)
	}
	return out
}
