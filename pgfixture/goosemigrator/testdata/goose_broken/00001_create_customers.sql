-- +goose Up
CREATE TABLE customers (id bigserial PRIMARY KEY);

-- +goose Down
DROP TABLE customers;
