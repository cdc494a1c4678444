package twicegue

import (
	"fmt"
	"regexp"
	"strings"
)

// observedTable is docs/queues.md's table of what gue's worker did in the
// differential suite, written from gue's outcomes (not the model's).
func observedTable(cases []gueCase, outcomes []string) string {
	var b strings.Builder
	b.WriteString("| case | deliveries logged in `j.Tx()` (error count each saw) | points | jobs left |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for i, c := range cases {
		// Two copies at once may reach several states: each is printed,
		// joined by "or".
		var dels, pts, lefts []string
		for _, state := range strings.Split(outcomes[i], "\n-- or --\n") {
			var counts []string
			for _, m := range errorCount.FindAllStringSubmatch(state, -1) {
				counts = append(counts, m[1])
			}
			points := "?"
			if m := pointsOf.FindStringSubmatch(state); m != nil {
				points = m[1]
			}
			dels = append(dels, strings.Join(counts, ", "))
			pts = append(pts, points)
			lefts = append(lefts, fmt.Sprint(strings.Count(state, "gue_jobs(")))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.name, strings.Join(dels, " or "), strings.Join(pts, " or "), strings.Join(lefts, " or "))
	}
	return b.String()
}

var (
	errorCount = regexp.MustCompile(`(?m)^deliveries\(error_count=(\d+)\)`)
	pointsOf   = regexp.MustCompile(`customers\(id=77, points=(\d+)\)`)
)
