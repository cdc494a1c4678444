// Package pgfixture provides a real PostgreSQL for tests: one server per test
// binary, databases cloned from per-schema templates, fast resets back to the
// migrated state, and snapshots of every row that compare as multisets.
//
// See the package index for the API; details are in the section "How
// PostgreSQL is found" below.
package pgfixture
