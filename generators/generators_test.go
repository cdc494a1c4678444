package generators_test

import (
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/generators"
)

// minimal returns the value of g that rapid shrinks to when every value fails.
func minimal[V any](t *testing.T, g *rapid.Generator[V]) V {
	t.Helper()
	fixedSeed(t)
	var last V
	tb := newRecTB(t)
	rapid.Check(tb, func(rt *rapid.T) {
		last = g.Draw(rt, "value")
		rt.Fatalf("every value fails")
	})
	if !tb.Failed() {
		t.Fatalf("the property did not fail")
	}
	return last // rapid replays the minimal case last
}

// shrinkSeed is the seed of the shrink-target checks. rapid's shrinker is a
// search, not a proof: for a few seeds in a hundred it stops short of the
// minimal value (CrashPoint(9) failing from 4 up stays at 9 for seed 39),
// so a check of where a generator shrinks to runs on a fixed seed, the same
// every run (-rapid.seed, when given, still wins).
const shrinkSeed = "1"

// fixedSeed sets rapid's seed for the rest of the test, unless -rapid.seed
// was given. The tests that use it are not parallel.
func fixedSeed(t *testing.T) {
	t.Helper()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.seed" })
	if given {
		return
	}
	f := flag.Lookup("rapid.seed")
	old := f.Value.String()
	if err := f.Value.Set(shrinkSeed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// minimalWhere returns the value rapid shrinks to when the values for which
// fails returns true fail.
func minimalWhere[V any](t *testing.T, g *rapid.Generator[V], fails func(V) bool) V {
	t.Helper()
	fixedSeed(t)
	var last V
	tb := newRecTB(t)
	rapid.Check(tb, func(rt *rapid.T) {
		v := g.Draw(rt, "value")
		if fails(v) {
			last = v
			rt.Fatalf("fails")
		}
	})
	if !tb.Failed() {
		t.Fatalf("the property did not fail")
	}
	return last
}

var emailRE = regexp.MustCompile(`^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$`)

func TestRanges(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		if id := generators.IDs().Draw(rt, "id"); id < 1 || id > generators.MaxID {
			rt.Fatalf("id %d out of range", id)
		}
		if id := generators.IDsBetween(10, 20).Draw(rt, "small id"); id < 10 || id > 20 {
			rt.Fatalf("id %d out of 10..20", id)
		}
		m := generators.Amounts().Draw(rt, "amount")
		if m.Minor < 1 || m.Minor > generators.MaxMinor || !slices.Contains(generators.Currencies, m.Currency) {
			rt.Fatalf("amount %v out of range", m)
		}
		if e := generators.Emails().Draw(rt, "email"); !emailRE.MatchString(e) {
			rt.Fatalf("email %q does not match %s", e, emailRE)
		}
		ts := generators.Times().Draw(rt, "time")
		if ts.Before(generators.WindowStart) || !ts.Before(generators.WindowEnd) || ts.Location() != time.UTC || ts.Nanosecond() != 0 {
			rt.Fatalf("time %s out of the window", ts)
		}
		if k := generators.PayoutKeys().Draw(rt, "key"); !regexp.MustCompile(`^payout-restaurant-[1-9][0-9]*-2026-W[0-5][0-9]$`).MatchString(k) {
			rt.Fatalf("key %q", k)
		}
		n := rapid.IntRange(1, 12).Draw(rt, "points")
		if p := generators.CrashPoint(n).Draw(rt, "point"); p < 1 || p > n {
			rt.Fatalf("crash point %d of %d", p, n)
		}
		s := generators.Subset(n, 3).Draw(rt, "subset")
		if len(s) < 1 || len(s) > min(3, n) || !slices.IsSorted(s) || s[0] < 0 || s[len(s)-1] >= n {
			rt.Fatalf("subset %v of %d", s, n)
		}
		for i := 1; i < len(s); i++ {
			if s[i] == s[i-1] {
				rt.Fatalf("subset %v repeats", s)
			}
		}
	})
}

func TestInterleavingIsAnInterleaving(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		steps := rapid.SliceOfN(rapid.IntRange(0, 5), 1, 3).Draw(rt, "steps")
		max := rapid.IntRange(0, 4).Draw(rt, "max preemptions")
		s := generators.Interleaving(steps, max).Draw(rt, "schedule")
		count := make([]int, len(steps))
		for _, w := range s {
			count[w]++
		}
		if !slices.Equal(count, steps) {
			rt.Fatalf("schedule %s has steps %v, want %v", s.Token(), count, steps)
		}
		if s.Preemptions() > max {
			rt.Fatalf("schedule %s has %d preemptions, at most %d allowed", s.Token(), s.Preemptions(), max)
		}
		if len(s) == 0 {
			return
		}
		back, err := concurrent.ParseSchedule(s.Token())
		if err != nil || !slices.Equal(back, s) {
			rt.Fatalf("token %q parses to %v, %v", s.Token(), []int(back), err)
		}
	})
}

func TestShrinkTargets(t *testing.T) {
	if got := minimal(t, generators.IDs()); got != 1 {
		t.Errorf("IDs shrink to %d, want 1", got)
	}
	if got := minimal(t, generators.Amounts()); got != (generators.Money{Minor: 1, Currency: "EUR"}) {
		t.Errorf("Amounts shrink to %v, want EUR 0.01", got)
	}
	if got := minimal(t, generators.Emails()); got != "ann@example.com" {
		t.Errorf("Emails shrink to %q", got)
	}
	if got := minimal(t, generators.Times()); !got.Equal(generators.WindowStart) {
		t.Errorf("Times shrink to %s", got)
	}
	if got := minimal(t, generators.PayoutKeys()); got != "payout-restaurant-1-2026-W01" {
		t.Errorf("PayoutKeys shrink to %q", got)
	}
	if got := minimal(t, generators.CrashPoint(7)); got != 1 {
		t.Errorf("CrashPoint shrinks to %d", got)
	}
	if got := minimal(t, generators.Subset(7, 3)); !slices.Equal(got, []int{0}) {
		t.Errorf("Subset shrinks to %v", got)
	}
	if got := minimal(t, generators.Interleaving([]int{3, 2}, 3)); got.Token() != "A3B2" {
		t.Errorf("Interleaving shrinks to %s", got.Token())
	}
	// Shrinking toward the earliest point that still fails, and toward
	// the fewest context switches that still fail.
	if got := minimalWhere(t, generators.CrashPoint(9), func(p int) bool { return p >= 4 }); got != 4 {
		t.Errorf("CrashPoint shrinks to %d, want the earliest failing point 4", got)
	}
	bReadsFirst := func(s concurrent.Schedule) bool { return s[0] == 0 && s[1] == 1 } // A1 B1 ...
	if got := minimalWhere(t, generators.Interleaving([]int{3, 3}, 4), bReadsFirst); got.Token() != "AB3A2" || got.Preemptions() != 1 {
		t.Errorf("Interleaving shrinks to %s (%d preemptions), want AB3A2 (1)", got.Token(), got.Preemptions())
	}
	if got := minimalWhere(t, generators.Amounts("INR", "JPY"), func(m generators.Money) bool { return m.Currency == "JPY" }); got != (generators.Money{Minor: 1, Currency: "JPY"}) {
		t.Errorf("Amounts shrink to %v, want JPY 1", got)
	}
}

func TestMoneyAndKeys(t *testing.T) {
	for _, c := range []struct {
		m    generators.Money
		want string
	}{
		{generators.Money{Minor: 8_400_000, Currency: "INR"}, "INR 84000.00"},
		{generators.Money{Minor: 5, Currency: "EUR"}, "EUR 0.05"},
		{generators.Money{Minor: 840, Currency: "JPY"}, "JPY 840"},
		{generators.Money{Minor: 1500, Currency: "KWD"}, "KWD 1.500"},
		{generators.Money{Minor: -1234, Currency: "USD"}, "USD -12.34"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%#v prints %q, want %q", c.m, got, c.want)
		}
	}
	week := time.Date(2026, time.October, 14, 12, 0, 0, 0, time.UTC)
	if got := generators.Key("payout", "Restaurant", int64(381), week); got != "payout-restaurant-381-2026-W42" {
		t.Errorf("Key = %q", got)
	}
}

func TestPanicsOnNonsense(t *testing.T) {
	for name, f := range map[string]func(){
		"IDsBetween(0, 5)":    func() { generators.IDsBetween(0, 5) },
		"Index(0)":            func() { generators.Index(0) },
		"CrashPoint(0)":       func() { generators.CrashPoint(0) },
		"Amounts(\"euro\")":   func() { generators.Amounts("euro") },
		"TimesIn(empty)":      func() { generators.TimesIn(generators.WindowStart, generators.WindowStart, time.Second) },
		"Weighted(0)":         func() { generators.Weighted(0, generators.IDs()) },
		"Chooser.Next(empty)": func() { generators.NewChooser(nil, "x", 1).Next(nil) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.HasPrefix(p.(string), "generators: ") {
					t.Errorf("%s: panic %v, want a generators: message", name, p)
				}
			}()
			f()
		}()
	}
}
