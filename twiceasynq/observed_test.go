package twiceasynq

import (
	"fmt"
	"regexp"
	"strings"
)

// observedTable is docs/queues.md's table of what asynq did in the
// differential suite, written from asynq's outcomes (not the model's).
func observedTable(cases []diffCase, outcomes []outcome) string {
	var b strings.Builder
	b.WriteString("| case | task options | played as | deliveries (retry count each saw) | final state | the same task enqueued again |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	played := map[string]string{
		"once":              "enqueued once",
		"crash@end":         "the first worker dies after the handler, before its ack",
		"duplicate-enqueue": "enqueued again once the first ended",
	}
	for i, c := range cases {
		var opts []string
		for _, o := range c.opts {
			opts = append(opts, "`"+o.String()+"`")
		}
		var retries []string
		for _, d := range outcomes[i].Deliveries {
			if m := retryCount.FindStringSubmatch(d); m != nil {
				retries = append(retries, m[1])
			}
		}
		again := outcomes[i].Again
		if again == "" {
			again = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.name, strings.Join(opts, " "), played[c.token],
			strings.Join(retries, ", "), outcomes[i].State, again)
	}
	return b.String()
}

var retryCount = regexp.MustCompile(`retry_count=(\d+)`)
