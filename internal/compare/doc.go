// Package compare is twice's comparison engine: a scenario's rows and effect
// log against the reference run's, with a diff out.
//
// It owns the canonical form of a run (Canon), in which every varying value
// is a marker. It owns finding the varying values, those that differ between
// two clean runs (Varying, varying.go). It owns generated keys, compared up
// to renaming, and their copies elsewhere (KeyCopies, generatedkeys.go). It
// owns JSON compared leaf by leaf (json.go). It owns the hints a diff
// explains itself with: times, JSON paths, the rows of generated keys, and
// a worker's own record of its deliveries when only its columns differ
// (DeliveryRecordHints, deliveryrecord.go); a Diff's Hints lists them
// after the effect log's diagnosis, in the order a finding prints them.
//
// It also owns the text of findings made the same from run to run.
// KeyAliases names the Idempotency-Keys the reference never sent (keys.go).
// MarkLiterals marks the times and uuids an ORM inlines into SQL
// (literals.go). Placeholders numbers the markers as ‹time 1›, ‹uuid 1›,
// in texts, rows, tables' diffs and effect mismatches (placeholders.go).
//
// It reads snapshots (pgfixture) and effect logs (effects) and imports no
// other package of twicekit. twice builds its inputs (Run) and turns a Diff
// into a finding.
package compare
