// Command tour runs every story of the examples — the source documents' jobs,
// each in its broken and fixed forms — through twice.Check, prints what the
// check found in the report format, and a one-line verdict per job. It exits
// 0 exactly when every verdict is the expected one: every broken job flagged
// by the expected scenarios, every fixed job passing.
//
//	go run ./examples/tour        # findings and verdicts
//	go run ./examples/tour -q     # verdicts only
//	go run ./examples/tour -run 'loyalty|payout'
//
// PostgreSQL is found as package pgfixture describes: TWICE_DATABASE_URL, a
// container, or local binaries started in a temporary directory; the tour
// stops what it started before it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/twicekit/twicekit/examples/internal/story"
	"github.com/twicekit/twicekit/examples/invoice"
	"github.com/twicekit/twicekit/examples/loyalty"
	"github.com/twicekit/twicekit/examples/orderstatus"
	"github.com/twicekit/twicekit/examples/payout"
	"github.com/twicekit/twicekit/examples/processedjobs"
	"github.com/twicekit/twicekit/examples/receipt"
	"github.com/twicekit/twicekit/examples/refund"
	"github.com/twicekit/twicekit/examples/riverjobs"
	"github.com/twicekit/twicekit/examples/shipped"
	"github.com/twicekit/twicekit/examples/storedresults"
	"github.com/twicekit/twicekit/examples/watermillorders"
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

func main() { os.Exit(run(os.Stdout, os.Args[1:])) }

// stories lists every form of every story, in the order the tour runs them.
func stories() []story.Form {
	var all []story.Form
	for _, forms := range [][]story.Form{
		loyalty.Forms(),
		receipt.Forms(),
		invoice.Forms(),
		payout.Forms(),
		refund.Forms(),
		orderstatus.Forms(),
		processedjobs.Forms(),
		storedresults.Forms(),
		riverjobs.Forms(),
		shipped.Forms(),
		watermillorders.Forms(),
	} {
		all = append(all, forms...)
	}
	return all
}

// matching lists the story forms whose "story/form" title re matches, in
// the tour's order.
func matching(re *regexp.Regexp) []story.Form {
	var forms []story.Form
	for _, f := range stories() {
		if re.MatchString(f.Title()) {
			forms = append(forms, f)
		}
	}
	return forms
}

// run is the tour: it returns the process's exit code (0: every verdict as
// expected; 1: some verdict not, or interrupted; 2: bad flags or no
// PostgreSQL).
func run(w io.Writer, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return tour(ctx, w, args)
}

func tour(ctx context.Context, w io.Writer, args []string) int {
	fs := flag.NewFlagSet("tour", flag.ContinueOnError)
	fs.SetOutput(w)
	quiet := fs.Bool("q", false, "print the verdicts only")
	pattern := fs.String("run", "", "run only the jobs whose `story/form` matches this regular expression")
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: go run ./examples/tour [-q] [-run regexp]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(w, "tour: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		fmt.Fprintf(w, "tour: -run: %v\n", err)
		return 2
	}
	forms := matching(re)
	if len(forms) == 0 {
		fmt.Fprintf(w, "tour: no job matches -run %q\n", *pattern)
		return 2
	}

	start := time.Now()
	say := func(format string, a ...any) {
		if !*quiet {
			fmt.Fprintf(w, format, a...)
		}
	}
	say("twicekit tour: %d jobs from the source documents, broken and fixed\n", len(forms))
	say("starting PostgreSQL (TWICE_DATABASE_URL, a container, or local binaries) …\n")
	srv, err := pgfixture.Shared(ctx)
	if err != nil {
		fmt.Fprintf(w, "tour: %v\n", err)
		return 2
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := srv.Close(cctx); err != nil {
			fmt.Fprintf(w, "tour: stopping PostgreSQL: %v\n", err)
		}
	}()
	say("PostgreSQL: %s (%s), ready in %s\n", srv.Mode(), srv.URL(), time.Since(start).Round(100*time.Millisecond))

	var verdicts []string
	failed := 0
	for i, f := range forms {
		say("\n[%d/%d] %s — %s\n", i+1, len(forms), f.Title(), f.Lesson)
		rep := twice.Check(ctx, f.Job, append([]twice.Option{twice.OnServer(srv)}, f.Options...)...)
		if ctx.Err() != nil {
			fmt.Fprintf(w, "tour: interrupted\n")
			return 1
		}
		ok, line := story.Verdict(f, rep)
		if !ok {
			failed++
		}
		if !rep.OK() || !ok {
			say("%s\n", indent(rep.String(), "    "))
		}
		fmt.Fprintln(w, line)
		verdicts = append(verdicts, line)
	}

	if !*quiet {
		fmt.Fprintf(w, "\nverdicts:\n")
		for _, v := range verdicts {
			fmt.Fprintf(w, "  %s\n", v)
		}
	}
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	if failed > 0 {
		fmt.Fprintf(w, "%d of %d verdicts unexpected (%s)\n", failed, len(forms), elapsed)
		return 1
	}
	fmt.Fprintf(w, "every verdict as expected: %d jobs, %d broken and flagged, %d fixed and idempotent (%s)\n",
		len(forms), countBroken(forms), len(forms)-countBroken(forms), elapsed)
	return 0
}

func countBroken(forms []story.Form) int {
	n := 0
	for _, f := range forms {
		if f.Broken() {
			n++
		}
	}
	return n
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
