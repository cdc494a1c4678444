CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE rewards (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL);
