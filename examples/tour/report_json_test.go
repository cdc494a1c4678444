package main

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// TestEveryReportIsValidJSON: the JSON report of every story form's check
// validates against docs/report-schema.json and is the same bytes when the
// same check runs again.
func TestEveryReportIsValidJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: checks every story twice")
	}
	schema, err := jsonschema.NewCompiler().Compile("../../docs/report-schema.json")
	if err != nil {
		t.Fatalf("docs/report-schema.json: %v", err)
	}
	srv, err := pgfixture.Shared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range stories() {
		t.Run(f.Title(), func(t *testing.T) {
			t.Parallel()
			opts := append([]twice.Option{twice.OnServer(srv), twice.ScheduleSeed(determinismSeed), twice.TestName("TestStory/" + f.Name)}, f.Options...)
			first, err := twice.Check(t.Context(), f.Job, opts...).JSON()
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Fatalf("the report of %s does not follow docs/report-schema.json: %v\n%s", f.Title(), err, first)
			}
			again, err := twice.Check(t.Context(), f.Job, opts...).JSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, again) {
				t.Fatalf("the same check wrote another JSON report:\n%s", lineDiff(string(first), string(again)))
			}
		})
	}
}
