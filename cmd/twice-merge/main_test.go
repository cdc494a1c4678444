package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }

var rewardSchema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL, points int NOT NULL DEFAULT 0);
CREATE TABLE rewards (order_id bigint PRIMARY KEY, points int NOT NULL);`)

var rewardSeed = twice.SeedSQL(`INSERT INTO customers (id, email) VALUES (1, 'ann@example.com'), (2, 'bob@example.com')`)

// rewardOrders rewards three orders, each with its points, a ledger row
// and an email (at least once). Unguarded, every redelivery adds the
// points again; guarded, an order already in the ledger is skipped, its
// email goes before its ledger row, and the ledger's key lets only one
// attempt add its points.
func rewardOrders(guarded bool) twice.Job {
	name := "reward orders unguarded"
	if guarded {
		name = "reward orders guarded"
	}
	return twice.Job{Name: name, Schema: rewardSchema, Seed: rewardSeed, Run: func(ctx context.Context, a *twice.Attempt) error {
		for order := int64(1); order <= 3; order++ {
			email := effects.Email{To: "ann@example.com", Subject: fmt.Sprintf("order %d: 10 points", order)}
			if !guarded {
				if _, err := a.Pool.Exec(ctx, `UPDATE customers SET points = points + 10 WHERE id = 1`); err != nil {
					return err
				}
				if _, err := a.Pool.Exec(ctx, `INSERT INTO rewards VALUES ($1, 10) ON CONFLICT DO NOTHING`, order); err != nil {
					return err
				}
				if err := a.Mailer.Send(ctx, email); err != nil {
					return err
				}
				continue
			}
			var done bool
			if err := a.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rewards WHERE order_id = $1)`, order).Scan(&done); err != nil {
				return err
			}
			if done {
				continue
			}
			if err := a.Mailer.Send(ctx, email); err != nil {
				return err
			}
			if _, err := a.Pool.Exec(ctx, `WITH r AS (INSERT INTO rewards VALUES ($1, 10) ON CONFLICT DO NOTHING RETURNING points)
UPDATE customers SET points = customers.points + r.points FROM r WHERE id = 1`, order); err != nil {
				return err
			}
		}
		return nil
	}}
}

// shardsTestName is the test name every check here reports: the checks
// are played once per test binary and their reports shared by the tests
// that merge them (played), so no report names one of those tests.
const shardsTestName = "TestShards"

// checkOptions are the options of every check here.
func checkOptions() []twice.Option {
	return []twice.Option{twice.TestName(shardsTestName), twice.EffectPolicy("email", effects.AtLeastOnce)}
}

const shards = 4

// played is a job checked whole and in 4 shards: the whole check's JSON
// report and each shard's, as 4 machines of a CI matrix would write them
// with -twice.report.
type played struct {
	whole  twice.JSONReport
	shards [][]byte
}

// plays keeps each job's played checks (by job name) for every test of the
// binary: a job's whole check and its shards are the same every time
// (the report is a function of the job, the options and the seed), and
// playing them once per test doubled this package's time.
var plays = struct {
	sync.Mutex
	byJob map[string]*played
}{byJob: map[string]*played{}}

// playShards checks job whole and in 4 shards, once per test binary, and
// writes each shard's JSON report into a directory of its own under the
// test's temporary directory; it returns the whole check's JSON report and
// the shards' directories.
func playShards(t *testing.T, job twice.Job) (whole twice.JSONReport, dirs []string) {
	t.Helper()
	p := func() *played {
		plays.Lock()
		defer plays.Unlock() // playShardsOnce may end the test (t.Fatal)
		if p, ok := plays.byJob[job.Name]; ok {
			return p
		}
		p := playShardsOnce(t, job)
		plays.byJob[job.Name] = p
		return p
	}()
	for k, b := range p.shards {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", k+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "TestShards--job.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return p.whole, dirs
}

// playShardsOnce plays job whole and in 4 shards, and fails the test unless
// every shard records its shard, plays a sequential scenario, and the shards
// together play every scenario of the whole check exactly once.
func playShardsOnce(t *testing.T, job twice.Job) *played {
	t.Helper()
	opts := checkOptions()
	all := twice.Check(t.Context(), job, opts...)
	if all.Err != nil {
		t.Fatal(all.Err)
	}
	p := &played{whole: jsonOf(t, all)}
	var tokens []string
	for k := 1; k <= shards; k++ {
		rep := twice.Check(t.Context(), job, append(opts, twice.Shard(k, shards))...)
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		js := jsonOf(t, rep)
		if js.Shard == nil || js.Shard.Index != k || js.Shard.Of != shards {
			t.Fatalf("shard %d/%d: the JSON report does not record its shard: %+v", k, shards, js.Shard)
		}
		sequential := 0
		for _, s := range js.Scenarios {
			tokens = append(tokens, s.Token)
			if slices.Contains(js.Shard.Planned, s.Token) {
				sequential++
			}
		}
		if sequential == 0 {
			t.Fatalf("shard %d/%d played no sequential scenario: the shards are not sharing the work", k, shards)
		}
		b, err := rep.JSON()
		if err != nil {
			t.Fatal(err)
		}
		p.shards = append(p.shards, b)
	}
	var want []string
	for _, s := range p.whole.Scenarios {
		want = append(want, s.Token)
	}
	slices.Sort(want)
	slices.Sort(tokens)
	if !slices.Equal(tokens, want) {
		t.Fatalf("the 4 shards together did not play every scenario of the whole check exactly once:\nwhole:  %v\nshards: %v", want, tokens)
	}
	return p
}

func jsonOf(t *testing.T, rep *twice.Report) twice.JSONReport {
	t.Helper()
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var js twice.JSONReport
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	return js
}

// TestShardsMergeIntoTheWholeCheck plays a buggy job and its fixed twin
// whole and in 4 shards: the shards together play every scenario of the
// whole check once, and twice-merge gives the whole check's verdict,
// scenarios and findings, and its exit code.
func TestShardsMergeIntoTheWholeCheck(t *testing.T) {
	for _, c := range []struct {
		job  twice.Job
		code int
	}{{rewardOrders(false), exitBroken}, {rewardOrders(true), exitKept}} {
		t.Run(c.job.Name, func(t *testing.T) {
			whole, dirs := playShards(t, c.job)
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"-out", out}, dirs...), &stdout, &stderr); code != c.code {
				t.Fatalf("twice-merge exited %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			b, err := os.ReadFile(filepath.Join(out, fileSafe(shardsTestName)+"--"+fileSafe(c.job.Name)+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var merged twice.JSONReport
			if err := json.Unmarshal(b, &merged); err != nil {
				t.Fatal(err)
			}
			if merged.Verdict != whole.Verdict {
				t.Fatalf("merged verdict %s, the whole check's %s", merged.Verdict, whole.Verdict)
			}
			if !reflect.DeepEqual(merged.Scenarios, whole.Scenarios) {
				t.Fatalf("merged scenarios differ from the whole check's:\nmerged: %+v\nwhole:  %+v", merged.Scenarios, whole.Scenarios)
			}
			if !reflect.DeepEqual(merged.Findings, whole.Findings) {
				t.Fatalf("merged findings differ from the whole check's:\nmerged: %s\nwhole:  %s", mustJSON(merged.Findings), mustJSON(whole.Findings))
			}
			if c.code == exitBroken && (len(whole.Findings) < 2 || !strings.Contains(stdout.String(), whole.Findings[0].Headline)) {
				t.Fatalf("want the Markdown to show the findings (%d), got:\n%s", len(whole.Findings), stdout.String())
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestAMissingShardFailsTheMerge: without shard 3 of 4 no verdict can be
// given, and twice-merge says which shard is missing; a partial shard fails
// the merge unless it says why a partial check is enough.
func TestAMissingShardFailsTheMerge(t *testing.T) {
	_, dirs := playShards(t, rewardOrders(true))
	var stdout, stderr bytes.Buffer
	code := run([]string{dirs[0], dirs[1], dirs[3]}, &stdout, &stderr)
	if code != exitMerge || !strings.Contains(stderr.String(), "shard 3/4 missing") {
		t.Fatalf("without shard 3: exit %d (want %d), stderr:\n%s", code, exitMerge, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{dirs[0], dirs[1], dirs[2], dirs[3], dirs[1]}, &stdout, &stderr); code != exitMerge || !strings.Contains(stderr.String(), "shard 2/4 is there twice") {
		t.Fatalf("shard 2 twice: exit %d (want %d), stderr:\n%s", code, exitMerge, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{t.TempDir()}, &stdout, &stderr); code != exitMerge || !strings.Contains(stderr.String(), "no twice JSON reports") {
		t.Fatalf("no reports: exit %d (want %d), stderr:\n%s", code, exitMerge, stderr.String())
	}
	partialShardFailsTheMerge(t, dirs) // the same shards' reports, edited
}

// TestABadShardIsRefused: a shard outside 1..n stops the check with a
// message that says what to give.
func TestABadShardIsRefused(t *testing.T) {
	rep := twice.Check(t.Context(), rewardOrders(true), twice.Shard(5, 4))
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "Shard(5, 4): shard k of n needs 1 ≤ k ≤ n (got k=5, n=4): give 1/4 to 4/4") {
		t.Fatalf("Shard(5, 4): want a clear error, got %v", rep.Err)
	}
	t.Setenv("TWICE_SHARD", "5/4")
	if rep := twice.Check(t.Context(), rewardOrders(true)); rep.Err == nil || !strings.Contains(rep.Err.Error(), "TWICE_SHARD=5/4: shard k of n needs") {
		t.Fatalf("TWICE_SHARD=5/4: want a clear error, got %v", rep.Err)
	}
	t.Setenv("TWICE_SHARD", "two")
	if rep := twice.Check(t.Context(), rewardOrders(true)); rep.Err == nil || !strings.Contains(rep.Err.Error(), "TWICE_SHARD=two: give the shard as k/n") {
		t.Fatalf("TWICE_SHARD=two: want a clear error, got %v", rep.Err)
	}
}

// TestTheDocumentedWorkflowRunsWhatIsTestedHere reads the GitHub Actions
// workflow of docs/ci.md: its matrix lists shards 1 to n, its test step
// plays shard ${{ matrix.shard }}/n (TWICE_SHARD, which these tests check) and writes
// the reports the merge job downloads, and the merge job runs this command
// on every shard's directory.
func TestTheDocumentedWorkflowRunsWhatIsTestedHere(t *testing.T) {
	b, err := os.ReadFile("testdata/twice-shards.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	for _, want := range []string{
		"shard: [1, 2, 3, 4]",
		"TWICE_SHARD: ${{ matrix.shard }}/4",
		"TWICE_REPORT_DIR: twice-reports",
		"path: twice-reports",
		"name: twice-shard-${{ matrix.shard }}",
		"pattern: twice-shard-*",
		"go run github.com/twicekit/twicekit/cmd/twice-merge -out twice-merged twice-shards/*",
	} {
		if !strings.Contains(wf, want) {
			t.Errorf("the workflow has no %q", want)
		}
	}
	if _, err := parseWorkflowShards(wf); err != nil {
		t.Error(err)
	}
}

// parseWorkflowShards checks that the matrix's shards are 1..n for the n
// of TWICE_SHARD.
func parseWorkflowShards(wf string) (int, error) {
	_, after, ok := strings.Cut(wf, "shard: [")
	list, _, ok2 := strings.Cut(after, "]")
	_, flag, ok3 := strings.Cut(wf, "TWICE_SHARD: ${{ matrix.shard }}/")
	if !ok || !ok2 || !ok3 {
		return 0, fmt.Errorf("no matrix of shards or no TWICE_SHARD")
	}
	var n int
	if _, err := fmt.Sscanf(flag, "%d", &n); err != nil {
		return 0, err
	}
	items := strings.Split(list, ",")
	if len(items) != n {
		return 0, fmt.Errorf("the matrix has %d shards, TWICE_SHARD says %d", len(items), n)
	}
	for i, it := range items {
		if strings.TrimSpace(it) != fmt.Sprint(i+1) {
			return 0, fmt.Errorf("matrix shard %d is %q, want %d", i+1, it, i+1)
		}
	}
	return n, nil
}

// partialShardFailsTheMerge: a shard whose wall budget left scenarios out
// makes the merged check partial, which is not a pass unless the shard says
// why it is enough (twice.PartialCheck). It edits shard 2's report in dirs.
func partialShardFailsTheMerge(t *testing.T, dirs []string) {
	path := filepath.Join(dirs[1], "TestShards--job.json")
	edit := func(partialOK string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var js twice.JSONReport
		if err := json.Unmarshal(b, &js); err != nil {
			t.Fatal(err)
		}
		js.Partial, js.PartialOK = "the wall budget (1s) left out 1 scenario: crash@3", partialOK
		if b, err = json.Marshal(js); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("")
	var stdout, stderr bytes.Buffer
	if code := run(dirs, &stdout, &stderr); code != exitBroken {
		t.Fatalf("a partial shard: exit %d, want %d; stderr:\n%s", code, exitBroken, stderr.String())
	}
	if want := "\n**The check is partial:** shard 2/4: the wall budget (1s) left out 1 scenario: crash@3\n"; !strings.Contains(stdout.String(), want) {
		t.Fatalf("want the Markdown to say %q, got:\n%s", want, stdout.String())
	}
	edit("a smoke run")
	stdout.Reset()
	if code := run(dirs, &stdout, &stderr); code != exitKept {
		t.Fatalf("a partial shard with its reason: exit %d, want %d; stderr:\n%s", code, exitKept, stderr.String())
	}
	if want := "\nA partial check is enough here (twice.PartialCheck): a smoke run\n"; !strings.Contains(stdout.String(), want) {
		t.Fatalf("want the Markdown to say %q, got:\n%s", want, stdout.String())
	}
}
