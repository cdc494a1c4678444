// Command twice-merge joins the JSON reports of twice checks played in
// shards (go test -twice.shard=k/n -twice.report=DIR on n machines of a CI
// matrix) into one verdict per check.
//
//	go run github.com/twicekit/twicekit/cmd/twice-merge [-out DIR] REPORT-DIR...
//
// It reads every twice JSON report under the directories (each shard's
// -twice.report directory, as CI downloads them), merges the shards of each
// check (twice.MergeShards) and writes one Markdown report to standard
// output (append it to $GITHUB_STEP_SUMMARY); -out DIR also writes each
// merged check as a JSON report. It exits 0 when every check kept every
// promise, 1 when a check broke one or could not run, and 2 when the
// reports cannot be merged: a shard is missing, or a directory cannot be
// read. docs/ci.md has the GitHub Actions workflow.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// The exit codes.
const (
	exitKept   = 0 // every check kept every promise
	exitBroken = 1 // a check broke a promise, could not run, or is partial (twice.PartialCheck)
	exitMerge  = 2 // the reports cannot be merged
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command with its arguments and outputs; it returns the exit
// code.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("twice-merge", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "", "also write each merged check's JSON report into this `directory`")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run github.com/twicekit/twicekit/cmd/twice-merge [-out DIR] REPORT-DIR...")
		fmt.Fprintln(stderr, "joins the JSON reports of sharded twice checks (-twice.shard=k/n -twice.report=DIR) into one verdict per check")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitMerge
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return exitMerge
	}
	reports, err := readReports(fl.Args())
	if err == nil && len(reports) == 0 {
		err = fmt.Errorf("no twice JSON reports under %s: give the directories the shards wrote with -twice.report=DIR", strings.Join(fl.Args(), ", "))
	}
	var merged []twice.JSONReport
	if err == nil {
		merged, err = twice.MergeShards(reports)
	}
	if err == nil && *out != "" {
		err = writeReports(*out, merged)
	}
	if err != nil {
		fmt.Fprintf(stderr, "twice-merge: %v\n", err)
		return exitMerge
	}
	code := exitKept
	for i, m := range merged {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprint(stdout, m.Markdown())
		if m.Verdict != "idempotent" || (m.Partial != "" && m.PartialOK == "") {
			code = exitBroken // a partial check is not a pass, unless it says why it is enough
		}
	}
	return code
}

// readReports reads every twice JSON report under dirs; other JSON files
// are left alone.
func readReports(dirs []string) ([]twice.JSONReport, error) {
	var out []twice.JSONReport
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || filepath.Ext(path) != ".json" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var r twice.JSONReport
			if json.Unmarshal(b, &r) != nil || r.Schema != reportSchema {
				return nil // not a twice report
			}
			if r.Version != twice.ReportSchemaVersion {
				return fmt.Errorf("%s: a report of schema version %d; this twice-merge reads version %d: run it from the twicekit version the tests used", path, r.Version, twice.ReportSchemaVersion)
			}
			out = append(out, r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the reports: %w", err)
		}
	}
	return out, nil
}

// reportSchema is the schema every twice JSON report names.
const reportSchema = "https://github.com/twicekit/twicekit/docs/report-schema.json"

// writeReports writes each merged report as DIR/<test>--<job>.json.
func writeReports(dir string, reports []twice.JSONReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, r := range reports {
		test := r.Test
		if test == "" {
			test = "Check"
		}
		name := fileSafe(test) + "--" + fileSafe(r.Job)
		if taken[name] {
			return errors.New("two merged checks of the same file name " + name)
		}
		taken[name] = true
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fileSafe keeps letters, digits, '-' and '.', as twice's own report
// files do.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}
