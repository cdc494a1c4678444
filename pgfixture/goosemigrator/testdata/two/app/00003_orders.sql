-- +goose Up
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint REFERENCES customers);
-- +goose Down
DROP TABLE orders;
