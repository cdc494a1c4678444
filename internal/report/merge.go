package report

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/twicekit/twicekit/internal/reportfmt"
)

// Merge joins the JSON reports of checks played in shards into one report
// per check, a check being its test and job (twice.MergeShards).
// The merged report has every scenario the shards played and every
// finding, in the order the unsharded check plays them.
// Its verdict is broken when any shard found a broken promise, error when
// any shard could not run.
// A report without a shard passes through as it is.
// It fails when a shard of a check is missing or there twice, or when the
// shards planned different scenarios.
func Merge(reports []JSONReport) ([]JSONReport, error) {
	groups := map[[2]string][]JSONReport{}
	var order [][2]string
	for _, r := range reports {
		key := [2]string{r.Test, r.Job}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r)
	}
	slices.SortFunc(order, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	var out []JSONReport
	for _, key := range order {
		m, err := mergeCheck(groups[key])
		if err != nil {
			return nil, fmt.Errorf("twice: merging the shards of %s: %w", checkName(key[0], key[1]), err)
		}
		out = append(out, m)
	}
	return out, nil
}

// checkName names a check in Merge's errors.
func checkName(test, job string) string {
	if test == "" {
		return fmt.Sprintf("job %q", job)
	}
	return fmt.Sprintf("%s (job %q)", test, job)
}

// mergeCheck joins the shards of one check.
func mergeCheck(shards []JSONReport) (JSONReport, error) {
	if len(shards) == 1 && shards[0].Shard == nil {
		return shards[0], nil
	}
	n := 0
	byIndex := map[int]JSONReport{}
	for _, r := range shards {
		if r.Shard == nil {
			return JSONReport{}, fmt.Errorf("a report without a shard beside sharded ones: give twice-merge the report directories of one sharded run only")
		}
		if n == 0 {
			n = r.Shard.Of
		}
		if r.Shard.Of != n {
			return JSONReport{}, fmt.Errorf("shards of %d and of %d machines: give twice-merge the report directories of one run", n, r.Shard.Of)
		}
		if _, dup := byIndex[r.Shard.Index]; dup {
			return JSONReport{}, fmt.Errorf("shard %d/%d is there twice: give twice-merge each shard's report directory once", r.Shard.Index, n)
		}
		byIndex[r.Shard.Index] = r
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return JSONReport{}, fmt.Errorf("shard %s missing: its scenarios were not checked, so no verdict can be given; run (or re-run) that shard and give twice-merge its report directory too",
			strings.Join(missing, ", "))
	}
	first := byIndex[1]
	m := JSONReport{Schema: first.Schema, Version: first.Version, Job: first.Job, Test: first.Test, Options: first.Options,
		Scenarios: []JSONScenario{}, Findings: []JSONFinding{}}
	position := map[string]int{}
	for i, t := range first.Shard.Planned {
		position[t] = i
	}
	type placed[T any] struct {
		key  [2]int // plan position, then the shard's own order (concurrent scenarios)
		item T
	}
	var scenarios []placed[JSONScenario]
	var findings []placed[JSONFinding]
	playedBy := map[string]int{}
	concurrent := 0
	var errs, partial []string
	for k := 1; k <= n; k++ {
		r := byIndex[k]
		// The concurrent shard's options.concurrency may say what its wall
		// budget cut; the merged report says what that shard says.
		opts := r.Options
		opts.Concurrency = first.Options.Concurrency
		if r.Shard.Concurrent {
			m.Options.Concurrency = r.Options.Concurrency
		}
		if !slices.Equal(r.Shard.Planned, first.Shard.Planned) || !reflect.DeepEqual(opts, first.Options) {
			return JSONReport{}, fmt.Errorf("shards 1/%d and %d/%d planned different scenarios or ran with different options: run every shard from the same commit and settings", n, k, n)
		}
		if r.Shard.Concurrent {
			concurrent++
		}
		at := func(token string, i int) [2]int {
			if p, ok := position[token]; ok {
				return [2]int{p, 0}
			}
			return [2]int{len(position), i} // a concurrent scenario: after the sequential ones, as it ran
		}
		for i, s := range r.Scenarios {
			if other, ok := playedBy[s.Token]; ok {
				return JSONReport{}, fmt.Errorf("scenario %s was played by shards %d/%d and %d/%d: run every shard from the same commit", s.Token, other, n, k, n)
			}
			playedBy[s.Token] = k
			scenarios = append(scenarios, placed[JSONScenario]{at(s.Token, i), s})
		}
		for i, f := range r.Findings {
			if f.Token == "once" { // the reference runs play in every shard
				if k == 1 {
					findings = append(findings, placed[JSONFinding]{[2]int{-1, 0}, f})
				}
				continue
			}
			findings = append(findings, placed[JSONFinding]{at(f.Token, i), f})
		}
		if r.Verdict == "error" {
			errs = append(errs, fmt.Sprintf("shard %d/%d: %s", k, n, r.Error))
		}
		if r.Partial != "" {
			partial = append(partial, fmt.Sprintf("shard %d/%d: %s", k, n, r.Partial))
			m.PartialOK = cmp.Or(m.PartialOK, r.PartialOK)
		}
	}
	if concurrent != 1 {
		return JSONReport{}, fmt.Errorf("%d shards played the concurrent scenarios, want exactly one: run every shard from the same commit", concurrent)
	}
	byKey := func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }
	slices.SortStableFunc(scenarios, func(a, b placed[JSONScenario]) int { return byKey(a.key, b.key) })
	slices.SortStableFunc(findings, func(a, b placed[JSONFinding]) int { return byKey(a.key, b.key) })
	for _, s := range scenarios {
		m.Scenarios = append(m.Scenarios, s.item)
	}
	for _, f := range findings {
		m.Findings = append(m.Findings, f.item)
	}
	m.Partial = strings.Join(partial, "; ")
	switch {
	case len(errs) > 0:
		m.Verdict, m.Error = "error", strings.Join(errs, "\n")
	case len(m.Findings) > 0:
		m.Verdict = "broken"
	default:
		m.Verdict = "idempotent"
	}
	// What every shard left out (options, the budget); what one shard's
	// crash-state cache covered is that shard's own.
	for _, line := range first.NotChecked {
		all := true
		for k := 2; k <= n; k++ {
			all = all && slices.Contains(byIndex[k].NotChecked, line)
		}
		if all {
			m.NotChecked = append(m.NotChecked, line)
		}
	}
	return m, nil
}

// MergedMarkdown is a merged report for a reader and for GitHub's job
// summary: the verdict, then each finding with its replay line, its
// timeline, the database's differences, the effects and the hints.
// Its control characters are not escaped yet (reportfmt.Text does).
func MergedMarkdown(r JSONReport) string {
	var b strings.Builder
	name := reportfmt.Name(r.Job)
	if r.Test != "" {
		name = reportfmt.Name(r.Test) + " · " + name
	}
	switch r.Verdict {
	case "error":
		fmt.Fprintf(&b, "## twice: %s: the check could not run\n\n```text\n%s\n```\n", name, r.Error)
		return b.String()
	case "broken":
		fmt.Fprintf(&b, "## twice: %s: %d of %d scenarios broke a promise\n", name, len(r.Findings), max(len(r.Scenarios), 1))
	default:
		fmt.Fprintf(&b, "## twice: %s: idempotent in all %d scenarios\n", name, len(r.Scenarios))
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n### %s\n\nReplay: `%s`\n\n```text\n", f.Headline, f.Replay)
		for _, e := range f.Timeline {
			switch e.Type {
			case "point":
				fmt.Fprintf(&b, "%s  %d. %s\n", e.Attempt, e.Point, e.Label)
			case "blocked", "released":
				fmt.Fprintf(&b, "%s  %s on %s\n", e.Attempt, e.Type, e.On)
			default:
				fmt.Fprintf(&b, "%s  %s\n", e.Attempt, e.Label)
			}
		}
		for _, d := range f.Database {
			fmt.Fprintf(&b, "\n%s:\n", d.Table)
			for _, row := range d.Missing {
				fmt.Fprintf(&b, "- %s\n", row)
			}
			for _, row := range d.Extra {
				fmt.Fprintf(&b, "+ %s\n", row)
			}
		}
		for _, m := range f.Effects {
			fmt.Fprintf(&b, "\neffect: %s\n", m.Text)
		}
		for _, p := range f.Problems {
			fmt.Fprintf(&b, "\n%s\n", p)
		}
		for _, h := range f.Hints {
			fmt.Fprintf(&b, "\nwhy: %s\n", h)
		}
		b.WriteString("```\n")
	}
	if r.Partial != "" {
		fmt.Fprintf(&b, "\n**The check is partial:** %s\n", r.Partial)
		if r.PartialOK != "" {
			fmt.Fprintf(&b, "\nA partial check is enough here (twice.PartialCheck): %s\n", r.PartialOK)
		}
	}
	return b.String()
}
