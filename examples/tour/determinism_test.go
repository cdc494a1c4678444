package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

// The determinism check's settings; .ci/determinism runs the test binary
// many times with -determinism.runs=1 and -determinism.out, and compares the
// files across processes.
var (
	determinismRuns     = flag.Int("determinism.runs", 0, "how many times TestEveryCheckIsDeterministic runs each story's check one scenario at a time in this process (default 1; with TWICE_LONG_TESTS=1, 20, or 2 under -race)")
	determinismParallel = flag.Bool("determinism.parallel", true, "TestEveryCheckIsDeterministic also runs each form it plays with twice.Parallel(3), held to the serial run's text")
	determinismOut      = flag.String("determinism.out", "", "write every story's verdict and report text (from the first run) to this `file`, for comparison across processes")
	determinismPlan     = flag.String("determinism.budget", twice.QuickBudget.Name, "the named `budget` every story's check plays under in TestEveryCheckIsDeterministic (quick, default, thorough)")
)

// determinismSeed is the schedule seed of every check in the determinism
// test (the default one, given explicitly so the test says what it fixes).
const determinismSeed = 1

// TestEveryCheckIsDeterministic runs the check of every story form
// -determinism.runs times one scenario at a time (1; with
// TWICE_LONG_TESTS=1, 20, or 2 under -race, where .ci/determinism covers the
// rest), under -determinism.budget (quick), and requires the verdict the
// story expects, the same report text and the same JSON report, byte for
// byte, every time; the JSON must follow docs/report-schema.json. One more
// run plays 3 scenarios at once (twice.Parallel(3)), each on its own
// database: its text and JSON must be the serial run's, byte for byte. The
// fast suite plays the first form of each story, once serially and once
// with that parallel run: so it compares two runs of a check of every
// story in one process; every form plays with TWICE_LONG_TESTS=1 or a
// -determinism.runs. -determinism.parallel=false leaves the parallel runs
// out (.ci/determinism's processes, which compare serial runs across
// processes).
func TestEveryCheckIsDeterministic(t *testing.T) {
	runs := *determinismRuns
	switch {
	case runs == 0 && !longtest.Enabled():
		runs = 1 // and the parallel run: two runs compared
	case runs == 0 && raceDetector:
		runs = 2 // 39 stories' checks, slow under -race
	case runs == 0:
		runs = 20
	case runs < 1:
		t.Fatalf("-determinism.runs=%d: give at least 1", runs)
	}
	srv, err := pgfixture.Shared(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.NewCompiler().Compile("../../docs/report-schema.json")
	if err != nil {
		t.Fatalf("docs/report-schema.json: %v", err)
	}
	budget, err := twice.ParseBudget(*determinismPlan)
	if err != nil {
		t.Fatalf("-determinism.budget: %v", err)
	}
	forms := stories()
	// The fast suite plays each story's first form: every form's verdict is
	// its own package's tests', and one run of a check shows no determinism.
	everyForm := longtest.Enabled() || *determinismRuns != 0
	texts := make([]string, len(forms))
	t.Run("story", func(t *testing.T) {
		for i, f := range forms {
			if !everyForm && !firstOfStory(forms, i) {
				continue
			}
			t.Run(f.Title(), func(t *testing.T) {
				t.Parallel()
				first, ok := determinismText(t.Context(), srv, budget, f)
				if !ok { // the same wrong answer every time is no success
					t.Fatalf("%s: the check did not say what the story expects:\n%s", f.Title(), first)
				}
				if err := validReportJSON(schema, first); err != nil {
					t.Fatalf("the JSON report of %s does not follow docs/report-schema.json: %v\n%s", f.Title(), err, first)
				}
				texts[i] = first
				if *determinismParallel {
					if got, _ := determinismText(t.Context(), srv, budget, f, twice.Parallel(3)); got != first {
						t.Fatalf("%s played 3 scenarios at once differs from the serial run (same job, options and seed %d):\n%s",
							f.Title(), determinismSeed, lineDiff(first, got))
					}
				}
				for run := 2; run <= runs; run++ {
					if got, _ := determinismText(t.Context(), srv, budget, f); got != first {
						t.Fatalf("run %d of %s differs from run 1 (same job, options and seed %d):\n%s",
							run, f.Title(), determinismSeed, lineDiff(first, got))
					}
				}
			})
		}
	})
	if *determinismOut == "" || t.Failed() {
		return
	}
	var b strings.Builder
	for i, f := range forms {
		fmt.Fprintf(&b, "=== %s\n%s\n", f.Title(), texts[i])
	}
	if err := os.WriteFile(*determinismOut, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// determinismText is what must not change between runs of a form's check:
// the verdict line, the scenarios that ran, the report text and, after a
// line "json:", the JSON report; ok tells whether the verdict is the one the
// story expects. The check plays under budget, unless the story names its
// own.
func determinismText(ctx context.Context, srv *pgfixture.Server, budget twice.Budget, f story.Form, extra ...twice.Option) (text string, ok bool) {
	// No wall budget: what the budget leaves out depends on the machine's
	// speed, and this test runs 39 checks at once, in as many processes at
	// once as .ci/determinism is given. A named budget instead: the same
	// plan on every machine, and the quick one (the default here) plays
	// about half of what the default budget does, every story still judged
	// as it expects.
	opts := append([]twice.Option{twice.OnServer(srv), twice.ScheduleSeed(determinismSeed), twice.TestName("TestStory/" + f.Name), twice.WallBudget(0), twice.WithBudget(budget)}, f.Options...)
	opts = append(opts, extra...)
	rep := twice.Check(ctx, f.Job, opts...)
	ok, verdict := story.Verdict(f, rep)
	js, err := rep.JSON()
	if err != nil {
		js = []byte(err.Error())
	}
	return verdict + "\nscenarios: " + strings.Join(rep.Tokens(), " ") + "\n" + rep.String() + "\n" + jsonMarker + string(js), ok
}

const jsonMarker = "json:\n"

// firstOfStory reports whether forms[i] is the first form of its story.
func firstOfStory(forms []story.Form, i int) bool {
	return i == 0 || forms[i-1].Story != forms[i].Story
}

// validReportJSON validates the JSON part of a determinism text.
func validReportJSON(schema *jsonschema.Schema, text string) error {
	_, js, ok := strings.Cut(text, "\n"+jsonMarker)
	if !ok {
		return fmt.Errorf("no JSON report in the text")
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(js))
	if err != nil {
		return err
	}
	return schema.Validate(inst)
}

// lineDiff shows the first lines where want and got differ, with context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	for k := from; k < i; k++ {
		fmt.Fprintf(&b, "  %s\n", w[k])
	}
	for k := i; k < min(len(w), i+5); k++ {
		fmt.Fprintf(&b, "- %s\n", w[k])
	}
	for k := i; k < min(len(g), i+5); k++ {
		fmt.Fprintf(&b, "+ %s\n", g[k])
	}
	return b.String()
}
