package report

import (
	"fmt"
	"reflect"
	"strings"
)

// The JSON report's types are twice's (JSONReport and its parts), field
// for field and tag for tag. twice converts between them and these with
// Copy: field by field in order, each part by Go's conversion, which
// panics when the two differ.

// JSONReport is twice.JSONReport.
type JSONReport struct {
	Schema     string         `json:"schema"`
	Version    int            `json:"version"`
	Job        string         `json:"job"`
	Test       string         `json:"test,omitempty"`
	Verdict    string         `json:"verdict"` // "idempotent", "broken" or "error"
	Error      string         `json:"error,omitempty"`
	Options    JSONOptions    `json:"options"`
	Scenarios  []JSONScenario `json:"scenarios"`
	Findings   []JSONFinding  `json:"findings"`
	NotChecked []string       `json:"not_checked,omitempty"`
	Partial    string         `json:"partial,omitempty"`
	PartialOK  string         `json:"partial_ok,omitempty"`
	Shard      *JSONShard     `json:"shard,omitempty"`
}

// JSONShard is twice.JSONShard.
type JSONShard struct {
	Index      int      `json:"index"`
	Of         int      `json:"of"`
	Planned    []string `json:"planned"`
	Concurrent bool     `json:"concurrent"`
}

// JSONOptions is twice.JSONOptions.
type JSONOptions struct {
	Budget           string            `json:"budget"`
	Isolation        string            `json:"isolation"`
	Policies         map[string]string `json:"policies,omitempty"`
	DuplicateEnqueue string            `json:"duplicate_enqueue"`
	Concurrency      string            `json:"concurrency"`
	LateRedrives     []string          `json:"late_redrives,omitempty"`
	Periodic         string            `json:"periodic,omitempty"`
	FollowUps        string            `json:"follow_ups,omitempty"`
	MaxDeliveries    int               `json:"max_deliveries"`
	AttemptTimeout   string            `json:"attempt_timeout"`
	Only             string            `json:"only,omitempty"`
	Runner           string            `json:"runner"`
	FreshSessions    bool              `json:"fresh_sessions_per_delivery,omitempty"`
}

// JSONScenario is twice.JSONScenario.
type JSONScenario struct {
	Token   string `json:"token"`
	Kind    string `json:"kind"`
	Verdict string `json:"verdict"`
}

// JSONFinding is twice.JSONFinding; its timeline's events are twice.JSONEvent's.
type JSONFinding struct {
	Token    string          `json:"token"`
	Kind     string          `json:"kind"`
	Headline string          `json:"headline"`
	Timeline []Event         `json:"timeline"`
	Database []JSONTableDiff `json:"database,omitempty"`
	Effects  []JSONMismatch  `json:"effects,omitempty"`
	Problems []string        `json:"problems,omitempty"`
	Hints    []string        `json:"hints,omitempty"`
	Replay   string          `json:"replay"`
}

// JSONTableDiff is twice.JSONTableDiff.
type JSONTableDiff struct {
	Table   string   `json:"table"`
	Missing []string `json:"missing"`
	Extra   []string `json:"extra"`
}

// JSONMismatch is twice.JSONMismatch.
type JSONMismatch struct {
	Kind    string `json:"kind"`
	Key     string `json:"key,omitempty"`
	Payload string `json:"payload,omitempty"`
	Policy  string `json:"policy"`
	Want    int    `json:"want"`
	Got     int    `json:"got"`
	Text    string `json:"text"`
}

// Checked is a finished check as its JSON report shows it: its view, and
// what only the JSON report says.
type Checked struct {
	Finished
	// Test is the test's name; empty when the check was given none.
	Test string
	// Schema and Version name the report's schema.
	Schema  string
	Version int
	// Options are the options that decided what the check ran.
	Options JSONOptions
	// Scenarios are the scenarios that ran, in order, with their verdicts.
	Scenarios []JSONScenario
	// Partial names what the wall budget left out; PartialOK is
	// PartialCheck's reason.
	Partial, PartialOK string
	// Shard is the shard the check played; nil when it was not sharded.
	Shard *JSONShard
}

// JSON is the JSON report of a finished check.
// Its findings' timelines are their runs' events; a finding without a run
// has an empty timeline.
func JSON(c Checked) JSONReport {
	out := JSONReport{
		Schema:    c.Schema,
		Version:   c.Version,
		Job:       c.Job,
		Test:      c.Test,
		Options:   c.Options,
		Scenarios: []JSONScenario{},
		Findings:  []JSONFinding{},
	}
	switch {
	case c.Failed:
		out.Verdict, out.Error = "error", c.Err
	case len(c.Findings) > 0:
		out.Verdict = "broken"
	default:
		out.Verdict = "idempotent"
	}
	out.Scenarios = append(out.Scenarios, c.Scenarios...)
	for _, f := range c.Findings {
		out.Findings = append(out.Findings, jsonFinding(f))
	}
	if out.Partial = c.Partial; out.Partial != "" {
		out.PartialOK = c.PartialOK
	}
	out.Shard = c.Shard
	for _, line := range strings.Split(strings.TrimSpace(c.NotChecked), "\n") {
		if line != "" {
			out.NotChecked = append(out.NotChecked, line)
		}
	}
	return out
}

func jsonFinding(f Finding) JSONFinding {
	jf := JSONFinding{
		Token:    f.Token,
		Kind:     f.Kind,
		Headline: f.Headline,
		Timeline: []Event{},
		Problems: f.Problems,
		Hints:    f.Hints,
		Replay:   f.Replay,
	}
	if f.Run != nil {
		var ev []Event
		jf.Timeline = append(ev, Events(*f.Run)...)
	}
	for _, d := range f.Database {
		td := JSONTableDiff{Table: d.Table, Missing: []string{}, Extra: []string{}}
		for _, row := range d.Missing {
			td.Missing = append(td.Missing, row.String())
		}
		for _, row := range d.Extra {
			td.Extra = append(td.Extra, row.String())
		}
		jf.Database = append(jf.Database, td)
	}
	jf.Effects = f.Mismatches
	return jf
}

// Map is f of each element of s, in order; nil when s is empty.
func Map[T, U any](s []T, f func(T) U) []U {
	var out []U
	for _, x := range s {
		out = append(out, f(x))
	}
	return out
}

// Strings is the String of each value of m, by key; nil when m is empty.
func Strings[K comparable, V fmt.Stringer](m map[K]V) map[K]string {
	var out map[K]string
	for k, v := range m {
		if out == nil {
			out = map[K]string{}
		}
		out[k] = v.String()
	}
	return out
}

// Copy is v as a T, twice's JSON types and the copies here converted
// field for field: their fields, in the same order, convert by Go's
// conversion, or are structs, slices or pointers of such fields. Nil slices
// and pointers stay nil, so the JSON is the same bytes.
func Copy[T any](v any) T {
	var out T
	copyValue(reflect.ValueOf(&out).Elem(), reflect.ValueOf(v))
	return out
}

func copyValue(dst, src reflect.Value) {
	switch {
	case src.Type().ConvertibleTo(dst.Type()):
		dst.Set(src.Convert(dst.Type()))
	case src.Kind() == reflect.Struct && dst.Kind() == reflect.Struct && src.NumField() == dst.NumField():
		for i := range src.NumField() {
			copyValue(dst.Field(i), src.Field(i))
		}
	case src.Kind() == reflect.Slice && dst.Kind() == reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				copyValue(dst.Index(i), src.Index(i))
			}
		}
	case src.Kind() == reflect.Pointer && dst.Kind() == reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
			copyValue(dst.Elem(), src.Elem())
		}
	default:
		panic(fmt.Sprintf("twice: internal error: %s does not copy to %s", src.Type(), dst.Type()))
	}
}
