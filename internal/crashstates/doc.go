// Package crashstates explores crash states once. A crash before point N
// leaves behind what was committed before N (rows and sequence values) and
// the effects made before N; the redelivery of a deterministic job starts
// from exactly that. Two crash points that leave the same world lead to the
// same redelivery, so the check plays the first of them and reports the
// others as covered by it. This is the state caching of model checkers,
// applied to crash points.
//
// Prints fingerprints the world before every point of the reference run,
// from a connection of the check's own: committed data is what a crash
// keeps (prints.go). Cache decides which crash points a check plays, and
// CoveredBy says the same of a plan played on lanes (cache.go).
//
// The verdict never changes: a covered crash point is played after all when
// the one covering it broke a promise, so a failing check reports every
// crash point that fails, as it would without the cache. twice keeps the
// option (EveryCrashPoint) and hands in only the crash points of its plan.
package crashstates
