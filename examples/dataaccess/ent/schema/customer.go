// Package schema is the ledger's ent schema; ent's generated code is in
// package ent (go generate ./ent).
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Customer holds a customer's loyalty points.
type Customer struct{ ent.Schema }

// Fields of Customer.
func (Customer) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int("points").Default(0),
	}
}
