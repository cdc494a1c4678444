package twice_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/twice"
)

// randomSeed seeds the loyalty customers with a random balance, or (name)
// with a random name and a fixed balance.
func randomSeed(column string) twice.Job {
	seed := twice.SeedSQL(`INSERT INTO customers (id, name, points) VALUES (77, 'Ann', (random() * 1000000)::int), (78, 'Bob', (random() * 1000000)::int)`)
	if column == "name" {
		seed = twice.SeedSQL(`INSERT INTO customers (id, name) VALUES (77, md5(random()::text)), (78, md5(random()::text))`)
	}
	return twice.Job{Schema: loyaltySchema, Seed: seed}
}

// The seed runs once and every scenario starts from its rows: a balance the
// seed draws at random is the same in every scenario, so the unguarded
// increment on it is flagged by the same scenarios as with a fixed seed,
// and the column is not compared by shape; the ledger passes.
func TestARandomSeedIsTheSameInEveryScenario(t *testing.T) {
	t.Parallel()
	want := []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}
	fixed, tokens := findingTokens(t, loyaltyJob("add 50 points, fixed seed", incrementPoints))
	require.Equal(t, want, tokens, fixed.String())

	job := randomSeed("points")
	job.Name, job.Run = "add 50 points to a random balance", incrementPoints
	rep, tokens := findingTokens(t, job)
	require.Equal(t, want, tokens, rep.String())
	require.Empty(t, rep.Varying, "no seeded column is compared by shape")

	job.Name, job.Run = "add 50 points once to a random balance", ledgerCTE
	rep, tokens = findingTokens(t, job)
	require.Empty(t, tokens, rep.String())
	require.Empty(t, rep.Varying)
}

// A seed drawing random values in a column the job does not change passes
// with the ledger, and the increment beside it is still flagged.
func TestARandomSeedInAnotherColumnStillPasses(t *testing.T) {
	t.Parallel()
	job := randomSeed("name")
	job.Name, job.Run = "add 50 points once, random names", ledgerCTE
	rep, tokens := findingTokens(t, job)
	require.Empty(t, tokens, rep.String())
	require.Empty(t, rep.Varying, "the names are the same in every scenario")

	job.Name, job.Run = "add 50 points, random names", incrementPoints
	rep, tokens = findingTokens(t, job)
	require.Equal(t, []string{"sequential", "crash@end", "duplicate-enqueue", "overlap@1"}, tokens, rep.String())
}
