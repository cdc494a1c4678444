package twice

import (
	"context"
	"time"

	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/queue"
)

// ExactValues switches off the comparison by shape: every column value and
// effect payload is compared exactly, even those that differ between two
// clean runs (so a job writing now() differs from its reference in every
// scenario, and the report's hint says which column). Such values still
// print as placeholders, never raw. Use it for a job that promises to write
// exactly the same values on every delivery. Generated keys (serial and
// identity columns, and the columns referencing them) are still compared up
// to renaming (internal/compare/generatedkeys.go).
func ExactValues() Option {
	return optionFunc(func(c *config) { c.ExactValues = true })
}

// secondReference runs the clean reference again and records in ref which
// values differ between the two runs (internal/compare/varying.go). A second
// run that does not succeed cleanly leaves the comparison exact.
func (c *checker) secondReference(ctx context.Context, ref *ScenarioRun, rep *Report) error {
	if c.cfg.OneReference {
		return nil
	}
	wall0 := time.Now()
	again, err := c.scenario(ctx, Scenario{Kind: Once}, playArgs{})
	if err != nil {
		return err
	}
	wall1 := time.Now()
	ref.Sessions = mergeSessions(ref.Sessions, again.Sessions)
	if !queue.SameDeliveries(queued(ref.Attempts), queued(again.Attempts)) {
		return nil
	}
	if last := lastDelivery(again); referenceFinding(again, last, nil, queueConfig{}) != nil || last.Err != nil {
		return nil
	}
	latest := c.cfg.Start
	for _, d := range c.cfg.Redrives {
		latest = latest.Add(d)
	}
	latest = c.cfg.Periodic.NextRun(latest)
	v := compare.Detect(ref.compared(), again.compared(), [2]time.Time{wall0, wall1}, [2]time.Time{c.cfg.Start, latest}, c.cfg.ExactValues)
	ref.varying = v.WithReference(ref.compared(), ref.keyCopies)
	rep.Varying = v.Found()
	return nil
}
