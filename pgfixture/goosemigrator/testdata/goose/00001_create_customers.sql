-- +goose Up
CREATE TABLE customers (
    id bigserial PRIMARY KEY,
    email text NOT NULL UNIQUE
);

-- +goose Down
CREATE TABLE down_ran (version int);
DROP TABLE customers;
