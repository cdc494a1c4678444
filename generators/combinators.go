package generators

import (
	"fmt"

	"pgregory.net/rapid"
)

// ChildrenOf draws min..max children of parent from child(parent), with
// distinct keys: the orders of one customer, the lines of one invoice.
//
//	orders := generators.ChildrenOf(customer, ordersOf, 1, 3,
//		func(o Order) int64 { return o.ID })
func ChildrenOf[P, C any, K comparable](parent P, child func(P) *rapid.Generator[C], min, max int, key func(C) K) *rapid.Generator[[]C] {
	return rapid.SliceOfNDistinct(child(parent), min, max, key)
}

// Weighted draws from one of gens, the first with weight first and each of
// the others with weight 1; it shrinks toward the first. Use it to make the
// common case common ("most orders are in EUR").
func Weighted[T any](first int, gens ...*rapid.Generator[T]) *rapid.Generator[T] {
	if len(gens) == 0 || first < 1 {
		panic(fmt.Sprintf("generators: Weighted(%d, %d generators): want a positive weight and a generator", first, len(gens)))
	}
	n := first + len(gens) - 1
	return rapid.Custom(func(t *rapid.T) T {
		i := rapid.IntRange(0, n-1).Draw(t, "choice")
		if i < first {
			return gens[0].Draw(t, "value")
		}
		return gens[i-first+1].Draw(t, "value")
	})
}
