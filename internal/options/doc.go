// Package options holds what a check's options set, before the check runs:
// Config, the fields twice's Option values write, with their defaults
// (config.go).
// It resolves the settings an option wins over: how many scenarios play at
// once, the shard, the wall budget (resolve.go).
// It says what the options switched off of the concurrent scenarios, whether
// the check may play them, how many workers it may make, and the error of an
// Only token that names no scenario of the job (concurrent.go).
// It words the options for the JSON report (json.go).
//
// twice keeps Option and every option with its doc, the defaults it
// documents (DefaultAttemptTimeout, DefaultMaxDeliveries, DefaultWallBudget),
// and what the options say in twice's own types: the budget (Budget), the
// queue's words (QueueWords), the follow-ups' Run (FollowUp) and rapid's
// draw of the scenarios.
package options
