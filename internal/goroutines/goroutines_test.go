package goroutines

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// BenchmarkCount measures the look every attempt takes once Run
// returned (twice/after_run.go): one goroutine profile, read for the attempt's
// label, with the test binary's goroutines as they are.
func BenchmarkCount(b *testing.B) {
	label := NextLabel()
	for b.Loop() {
		if n := Count(label); n != 0 {
			b.Fatalf("%d goroutines carry a fresh label", n)
		}
	}
}

// TestLabelledCountsTheFirstRecord: the profile's header line
// shares the first record's chunk; a job goroutine whose record comes first
// (records of one goroutine each are sorted by their stacks) is counted.
// It was not, and the reference run of a job whose goroutine called after
// Run returned then passed on a CI runner.
func TestLabelledCountsTheFirstRecord(t *testing.T) {
	const profile = "goroutine profile: total 5\n" +
		"1 @ 0x47d92e 0x480ac5 0x4d945d 0x483de1\n" +
		"# labels: {\"twice-attempt\":\"7\"}\n" +
		"#\t0x480ac4\ttime.Sleep+0x164\t/usr/local/go/src/runtime/time.go:363\n" +
		"#\t0x4d945c\texample.com/app/jobs.audit.func1+0x1c\t/app/jobs/audit.go:10\n" +
		"\n" +
		"2 @ 0x442931 0x47cd1d 0x4d945d 0x483de1\n" +
		"# labels: {\"twice-attempt\":\"7\"}\n" +
		"#\t0x4d945c\texample.com/app/jobs.notify.func2+0x1c\t/app/jobs/notify.go:20\n" +
		"\n" +
		"1 @ 0x442931 0x47cd1d 0x4d945d 0x483de1\n" +
		"# labels: {\"twice-attempt\":\"7\"}\n" +
		"#\t0x4d945c\tgithub.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck+0x1c\t/pgxpool/pool.go:495\n" +
		"\n" +
		"1 @ 0x442931 0x47cd1d 0x4d945d 0x483de1\n" +
		"# labels: {\"a b\":\"c d\", \"twice-attempt\":\"7\"}\n" +
		"#\t0x4d945c\tnet/http.(*persistConn).readLoop+0x1c\t/net/http/transport.go:2200\n" +
		"\n" +
		"1 @ 0x442931 0x47cd1d 0x4d945d 0x483de1\n" +
		"# labels: {\"twice-attempt\":\"71\"}\n" +
		"#\t0x4d945c\texample.com/app/jobs.audit.func1+0x1c\t/app/jobs/audit.go:10\n"
	if n := labelled(profile, "7"); n != 3 {
		t.Errorf("labelled(label 7) = %d, want 3 (the first record's 1 and the second's 2; pgx's, the standard library's under a label line with spaces, and label 71's aside)", n)
	}
	if n := labelled(profile, "8"); n != 0 {
		t.Errorf("labelled(label 8) = %d, want 0", n)
	}
}

// TestCountsShareOnlyProfilesTakenAfterThem: checks running at once share
// goroutine profiles, but a Count never answers from one that started
// before it was called. Each of many concurrent callers starts a goroutine
// with a label of its own, then asks for a profile: each profile must hold
// its goroutine. A profile taken before the goroutine started would not.
func TestCountsShareOnlyProfilesTakenAfterThem(t *testing.T) {
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				label := NextLabel()
				started, stop := make(chan struct{}), make(chan struct{})
				go func() {
					Label(label)
					close(started)
					<-stop
				}()
				<-started
				if want := fmt.Sprintf("%q:%q", labelKey, label); !strings.Contains(freshProfile(), want) {
					t.Errorf("the profile taken for label %s does not hold its goroutine, started before the call", label)
				}
				close(stop)
			}
		})
	}
	wg.Wait()
}
