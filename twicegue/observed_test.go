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
		var counts []string
		for _, m := range errorCount.FindAllStringSubmatch(outcomes[i], -1) {
			counts = append(counts, m[1])
		}
		points := "?"
		if m := pointsOf.FindStringSubmatch(outcomes[i]); m != nil {
			points = m[1]
		}
		left := strings.Count(outcomes[i], "gue_jobs(")
		fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", c.name, strings.Join(counts, ", "), points, left)
	}
	return b.String()
}

var (
	errorCount = regexp.MustCompile(`(?m)^deliveries\(error_count=(\d+)\)`)
	pointsOf   = regexp.MustCompile(`customers\(id=77, points=(\d+)\)`)
)
