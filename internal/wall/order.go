package wall

// Order is the order the sequential scenarios play in under a wall budget:
// in rounds, each round the next scenario of every kind (in plan order
// within a kind), so that every kind plays its first scenario before any
// plays its second. kinds[i] is the kind of the plan's i-th scenario;
// firsts is the first round, rest the others, as indexes into the plan.
func Order[K comparable](kinds []K) (firsts, rest []int) {
	var kindsSeen []K
	byKind := map[K][]int{}
	for i, k := range kinds {
		if _, ok := byKind[k]; !ok {
			kindsSeen = append(kindsSeen, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	for round := 0; ; round++ {
		any := false
		for _, k := range kindsSeen {
			if round < len(byKind[k]) {
				any = true
				if round == 0 {
					firsts = append(firsts, byKind[k][round])
				} else {
					rest = append(rest, byKind[k][round])
				}
			}
		}
		if !any {
			return firsts, rest
		}
	}
}
