-- +goose Up
CREATE TABLE customers (id bigint PRIMARY KEY);
-- +goose Down
DROP TABLE customers;
