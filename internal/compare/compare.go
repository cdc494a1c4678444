package compare

import (
	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/pgfixture"
)

// Run is what a comparison reads of one scenario: the rows after it and the
// effect log.
type Run struct {
	Snapshot *pgfixture.Snapshot
	Effects  []effects.Effect
}

// Diff is a scenario's run compared with the reference run.
type Diff struct {
	// Want is the reference run in canonical form, Got the scenario's.
	Want, Got *Canon
	// Database lists the tables whose rows differ.
	Database []pgfixture.TableDiff
	// Effects lists the effects whose counts break their policy.
	Effects []effects.Mismatch
}

// Runs compares a scenario's run with the reference run ref. Values that
// differ between two clean runs (v, nil for none found) compare by shape.
// Copies of generated keys at the places the reference run designates (kc,
// nil for none) are renamed with their keys where the scenario confirms
// them. A scenario that differs with the copies renamed is compared again
// with the copies raw, and the smaller difference is the one returned.
func Runs(v *Varying, kc *KeyCopies, ref, run Run, policies effects.Policies) Diff {
	kc = kc.confirmed(run) // generatedkeys.go
	want, got := v.Canon(ref, kc), v.Canon(run, kc)
	db, eff := pgfixture.Diff(want.snap, got.snap), effects.Compare(want.effects, got.effects, policies)
	if kc != nil && (len(db) > 0 || len(eff) > 0) {
		// A number renamed as a key's copy by chance: equal with the copies
		// raw is equal, and the smaller difference is the one reported
		// (generatedkeys.go).
		w, g := v.Canon(ref, nil), v.Canon(run, nil)
		if d, e := pgfixture.Diff(w.snap, g.snap), effects.Compare(w.effects, g.effects, policies); differences(d, e) < differences(db, eff) {
			want, got, db, eff = w, g, d, e
		}
	}
	return Diff{Want: want, Got: got, Database: db, Effects: eff}
}

// differences counts the differing tables and effects of a comparison.
func differences(db []pgfixture.TableDiff, eff []effects.Mismatch) int { return len(db) + len(eff) }

// Hints explains the diff d, made with the varying values v (nil: none
// found): the effect log's diagnosis (with the requests the provider
// rejected), each mismatch's policy, times, a worker's own record of its
// deliveries, JSON paths and generated keys, in that order.
func (d Diff) Hints(v *Varying, rejected []effects.Rejection) []string {
	want, got := d.Want, d.Got
	hints := effects.Diagnose(want.Effects(), got.Effects(), got.Rejected(rejected)...)
	for _, m := range d.Effects {
		hints = append(hints, effects.Explain(m))
	}
	hints = append(hints, v.TimeHints(want, d.Database)...)
	hints = append(hints, DeliveryRecordHints(d.Database)...) // deliveryrecord.go
	hints = append(hints, JSONHints(want, d.Database)...)
	return append(hints, KeyHints(want, got, d.Database, d.Effects)...)
}
