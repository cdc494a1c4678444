package otherqueues_test

import (
	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
)

var schema = pgfixture.SQL(`
CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE processed_tasks (task_id text PRIMARY KEY);
CREATE TABLE rewarded_orders (order_id bigint PRIMARY KEY);
CREATE TABLE jobs (id text PRIMARY KEY, order_id bigint NOT NULL);`)

var seed = twice.SeedSQL(`INSERT INTO customers (id) VALUES (77)`,
	`INSERT INTO orders VALUES (9812, 77, 'paid'), (9813, 77, 'cancelled')`)

func tokens(rep *twice.Report) (out []string) {
	for _, f := range rep.Findings {
		out = append(out, f.Token)
	}
	return out
}
