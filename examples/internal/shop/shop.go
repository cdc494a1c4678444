// Package shop is the examples' demo domain for property tests: customers
// and orders, their rapid generators, and tables whose CHECK constraints
// state what a drawn record satisfies.
package shop

import (
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/generators"
)

// Customer is a customer record as a loyalty or orders schema holds it.
type Customer struct {
	ID     int64
	Name   string // non-empty, may hold non-ASCII letters ("Léa Martin")
	Email  string // as generators.Emails draws it
	Points int    // loyalty balance, 0..MaxPoints
}

// MaxPoints bounds a drawn customer's loyalty balance.
const MaxPoints = 100_000

var names = []string{"Ann", "Bob", "Chen Wei", "José Álvarez", "Léa Martin", "O'Brien", "Zoë"}

// Customers draws customers; it shrinks toward
// {ID: 1, Name: "Ann", Email: "ann@example.com", Points: 0}.
func Customers() *rapid.Generator[Customer] {
	return rapid.Custom(func(t *rapid.T) Customer {
		return Customer{
			ID:     generators.IDs().Draw(t, "customer id"),
			Name:   rapid.SampledFrom(names).Draw(t, "name"),
			Email:  generators.Emails().Draw(t, "email"),
			Points: rapid.IntRange(0, MaxPoints).Draw(t, "points"),
		}
	})
}

var statuses = []string{"placed", "paid", "shipped", "delivered"}

// Statuses returns the order statuses in the order an order goes through
// them. [Orders] shrinks toward the first.
func Statuses() []string { return slices.Clone(statuses) }

// Order is an order record. [OrderSchemaSQL] states its constraints.
type Order struct {
	ID         int64
	CustomerID int64
	Email      string
	Total      generators.Money
	Status     string
	PlacedAt   time.Time
}

// Orders draws orders of any customer.
func Orders() *rapid.Generator[Order] {
	return rapid.Custom(func(t *rapid.T) Order {
		c := Customers().Draw(t, "customer")
		return OrdersOf(c).Draw(t, "order")
	})
}

// OrdersOf draws orders placed by c: CustomerID and Email are c's.
func OrdersOf(c Customer) *rapid.Generator[Order] {
	return rapid.Custom(func(t *rapid.T) Order {
		return Order{
			ID:         generators.IDs().Draw(t, "order id"),
			CustomerID: c.ID,
			Email:      c.Email,
			Total:      generators.Amounts().Draw(t, "total"),
			Status:     rapid.SampledFrom(statuses).Draw(t, "status"),
			PlacedAt:   generators.Times().Draw(t, "placed at"),
		}
	})
}

// CustomerSchemaSQL is a customers table whose CHECK constraints are what
// [Customers] draws.
const CustomerSchemaSQL = `CREATE TABLE customers (
  id     bigint PRIMARY KEY CHECK (id > 0),
  name   text   NOT NULL CHECK (name <> ''),
  email  text   NOT NULL CHECK (email ~ '^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$'),
  points int    NOT NULL DEFAULT 0 CHECK (points >= 0)
);`

// OrderSchemaSQL is an orders table whose CHECK constraints are what
// [Orders] draws.
const OrderSchemaSQL = `CREATE TABLE orders (
  id             bigint  PRIMARY KEY CHECK (id > 0),
  customer_id    bigint  NOT NULL REFERENCES customers (id),
  email          text    NOT NULL CHECK (email ~ '^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$'),
  total_minor    bigint  NOT NULL CHECK (total_minor > 0),
  currency       char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  status         text    NOT NULL CHECK (status IN ('placed', 'paid', 'shipped', 'delivered')),
  placed_at      timestamptz NOT NULL CHECK (placed_at >= '2026-01-01 00:00:00+00' AND placed_at < '2027-01-01 00:00:00+00')
);`
