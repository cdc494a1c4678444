package generators

import (
	"time"

	"pgregory.net/rapid"
)

// Customer is a customer record as a loyalty or orders schema holds it.
type Customer struct {
	ID     int64
	Name   string // non-empty, may hold non-ASCII letters ("Léa Martin")
	Email  string // as [Emails] draws it, derived from Name
	Points int    // loyalty balance, 0..MaxPoints
}

// MaxPoints bounds a drawn customer's loyalty balance.
const MaxPoints = 100_000

// Customers draws customers, shrinking toward
// {ID: 1, Name: "Ann", Email: "ann@example.com", Points: 0}.
func Customers() *rapid.Generator[Customer] {
	return rapid.Custom(func(t *rapid.T) Customer {
		id := IDs().Draw(t, "customer id")
		p := rapid.SampledFrom(people).Draw(t, "name")
		return Customer{
			ID:     id,
			Name:   p.name,
			Email:  emailFor(t, p.local),
			Points: rapid.IntRange(0, MaxPoints).Draw(t, "points"),
		}
	})
}

// Order statuses in the order an order goes through them; [Orders] shrinks
// toward the first.
var Statuses = []string{"placed", "paid", "shipped", "delivered"}

// Order is an order record. Its constraints, as [OrderSchemaSQL] states them:
// positive IDs, a positive total in minor units with a currency code, a
// status from [Statuses], an e-mail address, a placing time in the window.
type Order struct {
	ID         int64
	CustomerID int64
	Email      string
	Total      Money
	Status     string
	PlacedAt   time.Time
}

// Orders draws orders of any customer, shrinking toward order 1 of customer
// 1, 1 minor unit of the first currency, "placed", at WindowStart.
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
			ID:         IDs().Draw(t, "order id"),
			CustomerID: c.ID,
			Email:      c.Email,
			Total:      Amounts().Draw(t, "total"),
			Status:     rapid.SampledFrom(Statuses).Draw(t, "status"),
			PlacedAt:   Times().Draw(t, "placed at"),
		}
	})
}

// CustomerSchemaSQL and OrderSchemaSQL are tables whose CHECK constraints are
// the documented constraints of [Customer] and [Order]: every drawn record
// inserts. Use them in a job's schema, or as the reference for your own.
const (
	CustomerSchemaSQL = `CREATE TABLE customers (
  id     bigint PRIMARY KEY CHECK (id > 0),
  name   text   NOT NULL CHECK (name <> ''),
  email  text   NOT NULL CHECK (email ~ '^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$'),
  points int    NOT NULL DEFAULT 0 CHECK (points >= 0)
);`
	OrderSchemaSQL = `CREATE TABLE orders (
  id             bigint  PRIMARY KEY CHECK (id > 0),
  customer_id    bigint  NOT NULL REFERENCES customers (id),
  email          text    NOT NULL CHECK (email ~ '^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$'),
  total_minor    bigint  NOT NULL CHECK (total_minor > 0),
  currency       char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  status         text    NOT NULL CHECK (status IN ('placed', 'paid', 'shipped', 'delivered')),
  placed_at      timestamptz NOT NULL CHECK (placed_at >= '2026-01-01 00:00:00+00' AND placed_at < '2027-01-01 00:00:00+00')
);`
)
