package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Reward records a rewarded order (its ID is the order's).
type Reward struct{ ent.Schema }

// Fields of Reward.
func (Reward) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id").StorageKey("order_id"),
		field.Int64("customer_id"),
	}
}
