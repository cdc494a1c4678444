-- +goose Up
CREATE TABLE invoices (id bigint PRIMARY KEY, customer_id bigint REFERENCES customers);
-- +goose Down
DROP TABLE invoices;
