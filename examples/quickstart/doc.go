// Package rewards is the README's quick start: reward_test.go is a complete,
// self-contained user test (a schema, a job, twice.AssertIdempotent), and
// readme_test.go checks that the README shows it verbatim, so the code a new
// user copies always compiles and passes.
package rewards
