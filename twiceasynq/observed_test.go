package twiceasynq

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// observedTable is docs/queues.md's table of what asynq did in the
// differential suite, written from asynq's outcomes (not the model's).
func observedTable(cases []diffCase, outcomes []outcome) string {
	var b strings.Builder
	b.WriteString("| case | task options | played as | deliveries (retry count each saw) | final state | the same task enqueued again | points |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	played := map[string]string{
		"once":              "enqueued once",
		"crash@end":         "the first worker dies after the handler, before its ack",
		"duplicate-enqueue": "enqueued again once the first ended",
		"duplicate-overlap": "enqueued twice; both copies run at once (Concurrency 2)",
	}
	for i, c := range cases {
		var opts []string
		for _, o := range c.opts {
			opts = append(opts, "`"+o.String()+"`")
		}
		alts := outcomes[i].Or
		if len(alts) == 0 {
			alts = []outcome{outcomes[i]}
		}
		var deliveries, states, agains, points []string
		for _, o := range alts {
			var retries []string
			for _, d := range o.Deliveries {
				if m := retryCount.FindStringSubmatch(d); m != nil {
					retries = append(retries, m[1])
				}
			}
			again := o.Again
			if again == "" {
				again = "—"
			}
			p := "?"
			for _, r := range o.Rows {
				if m := pointsOf.FindStringSubmatch(r); m != nil {
					p = m[1]
				}
			}
			deliveries, states, agains, points = append(deliveries, strings.Join(retries, ", ")), append(states, o.State), append(agains, again), append(points, p)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.name, strings.Join(opts, " "), played[c.token],
			orList(deliveries), orList(states), orList(agains), orList(points))
	}
	return b.String()
}

// orList prints the values of several outcomes, one when they agree.
func orList(vs []string) string {
	if len(slices.Compact(slices.Clone(vs))) == 1 {
		return vs[0]
	}
	return strings.Join(vs, " or ")
}

var (
	retryCount = regexp.MustCompile(`retry_count=(\d+)`)
	pointsOf   = regexp.MustCompile(`^customers\(id=77, points=(\d+)\)`)
)
