package generators

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// MaxID is the largest ID [IDs] draws: big enough to be realistic, small
// enough to fit every integer column type a job might use for it.
const MaxID = 1_000_000_000

// IDs draws positive IDs in 1..MaxID, shrinking toward 1.
func IDs() *rapid.Generator[int64] { return IDsBetween(1, MaxID) }

// IDsBetween draws IDs in min..max, shrinking toward min. It panics unless
// 1 <= min <= max.
func IDsBetween(min, max int64) *rapid.Generator[int64] {
	if min < 1 || min > max {
		panic(fmt.Sprintf("generators: IDsBetween(%d, %d): want 1 <= min <= max", min, max))
	}
	return rapid.Int64Range(min, max)
}

// Money is an amount as integer minor units (cents, paise; yen have none)
// with its ISO 4217 currency code. Money is never a float.
type Money struct {
	Minor    int64
	Currency string
}

// String prints the amount in major units: "EUR 12.34", "JPY 840", "KWD 1.500".
func (m Money) String() string {
	e := Exponent(m.Currency)
	neg := m.Minor < 0
	v := m.Minor
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if e > 0 {
		for len(s) <= e {
			s = "0" + s
		}
		s = s[:len(s)-e] + "." + s[len(s)-e:]
	}
	if neg {
		s = "-" + s
	}
	return m.Currency + " " + s
}

// Currencies are the currencies [Amounts] draws from, the first shrunk toward.
var Currencies = []string{"EUR", "USD", "GBP", "INR", "JPY"}

// Exponent is the number of minor-unit digits of an ISO 4217 currency: 0 for
// JPY and KRW, 3 for BHD, KWD, OMR and TND, 2 otherwise.
func Exponent(currency string) int {
	switch currency {
	case "JPY", "KRW", "CLP", "ISK", "VND":
		return 0
	case "BHD", "KWD", "OMR", "TND", "JOD", "IQD", "LYD":
		return 3
	}
	return 2
}

// MaxMinor is the largest amount [Amounts] draws: 100 million minor units.
const MaxMinor = 100_000_000

// Amounts draws positive amounts of 1..MaxMinor minor units in one of
// currencies (default [Currencies]), shrinking toward 1 minor unit of the
// first currency.
func Amounts(currencies ...string) *rapid.Generator[Money] {
	return AmountsBetween(1, MaxMinor, currencies...)
}

// AmountsBetween draws amounts of min..max minor units (shrinking toward the
// bound nearest zero) in one of currencies (default [Currencies]; shrinking
// toward the first). Currency codes must be three upper-case letters.
func AmountsBetween(min, max int64, currencies ...string) *rapid.Generator[Money] {
	if len(currencies) == 0 {
		currencies = Currencies
	}
	for _, c := range currencies {
		if !isCurrency(c) {
			panic(fmt.Sprintf("generators: %q is not an ISO 4217 currency code (three upper-case letters)", c))
		}
	}
	if min > max {
		panic(fmt.Sprintf("generators: AmountsBetween(%d, %d): min > max", min, max))
	}
	cur := rapid.SampledFrom(currencies)
	minor := rapid.Int64Range(min, max)
	return rapid.Custom(func(t *rapid.T) Money {
		c := cur.Draw(t, "currency")
		return Money{Minor: minor.Draw(t, "minor units"), Currency: c}
	})
}

func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// person is a name and the local part of its e-mail address.
type person struct{ name, local string }

var people = []person{
	{"Ann", "ann"}, {"Bob", "bob"}, {"Chen Wei", "chen.wei"}, {"Dara", "dara"},
	{"Emeka Obi", "emeka.obi"}, {"Fatima", "fatima"}, {"Giorgos", "giorgos"},
	{"Hana Sato", "hana.sato"}, {"Ishaan", "ishaan"}, {"José Álvarez", "jose.alvarez"},
	{"Kofi", "kofi"}, {"Léa Martin", "lea.martin"}, {"Mei", "mei"}, {"Nikolai", "nikolai"},
	{"O'Brien", "obrien"}, {"Priya Nair", "priya.nair"}, {"Zoë", "zoe"},
}

// Domains are the domains [Emails] draws from: reserved for examples
// (RFC 2606), so a drawn address never reaches a real mailbox.
var Domains = []string{"example.com", "example.org", "example.net"}

var emailTags = []string{"", "+orders", "+billing"}

// Emails draws lower-case e-mail addresses such as "lea.martin7+billing@example.org":
// a name, an optional number, an optional +tag, a domain from [Domains]. They
// match ^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$ and shrink toward "ann@example.com".
func Emails() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		p := rapid.SampledFrom(people).Draw(t, "name")
		return emailFor(t, p.local)
	})
}

func emailFor(t *rapid.T, local string) string {
	n := rapid.IntRange(0, 99).Draw(t, "number")
	tag := rapid.SampledFrom(emailTags).Draw(t, "tag")
	dom := rapid.SampledFrom(Domains).Draw(t, "domain")
	if n > 0 {
		local += strconv.Itoa(n)
	}
	return local + tag + "@" + dom
}

// Window is the default span of [Times]: the year 2026, UTC.
var (
	WindowStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	WindowEnd   = time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// Times draws UTC timestamps in [WindowStart, WindowEnd) to the second,
// shrinking toward WindowStart.
func Times() *rapid.Generator[time.Time] { return TimesIn(WindowStart, WindowEnd, time.Second) }

// TimesIn draws UTC timestamps from..to (to excluded) on multiples of step
// after from, shrinking toward from.
func TimesIn(from, to time.Time, step time.Duration) *rapid.Generator[time.Time] {
	if step <= 0 || !to.After(from) {
		panic(fmt.Sprintf("generators: TimesIn(%s, %s, %s): want from < to and step > 0", from, to, step))
	}
	steps := int64((to.Sub(from) - 1) / step)
	from = from.UTC()
	return rapid.Map(rapid.Int64Range(0, steps), func(i int64) time.Time {
		return from.Add(time.Duration(i) * step)
	})
}

// ISOWeek formats the ISO 8601 week of t: "2026-W42".
func ISOWeek(t time.Time) string {
	y, w := t.ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}

// Key derives an idempotency key from stable parts of a job, joined by "-":
// strings lower-cased with spaces as "-", integers in decimal, times as their
// ISO week ([ISOWeek]), fmt.Stringers by their String. The same parts always
// give the same key, so every retry of the job sends the same key:
//
//	Key("payout", "restaurant", 381, week) == "payout-restaurant-381-2026-W42"
//
// Never put an attempt number, a random UUID or the wall clock in a key.
func Key(parts ...any) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		var s string
		switch v := p.(type) {
		case string:
			s = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(v)), " ", "-")
		case time.Time:
			s = ISOWeek(v)
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		case int32:
			s = strconv.FormatInt(int64(v), 10)
		case uint64:
			s = strconv.FormatUint(v, 10)
		case fmt.Stringer:
			s = v.String()
		default:
			s = fmt.Sprint(v)
		}
		out = append(out, s)
	}
	return strings.Join(out, "-")
}

// PayoutKeys draws the idempotency keys of weekly restaurant payouts,
// "payout-restaurant-<id>-<ISO week>", shrinking toward
// "payout-restaurant-1-2026-W01".
func PayoutKeys() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		id := IDs().Draw(t, "restaurant")
		week := Times().Draw(t, "week")
		return Key("payout", "restaurant", id, week)
	})
}
