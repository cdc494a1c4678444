-- +goose Up
ALTER TABLE customers ADD COLUMN name txet;

-- +goose Down
ALTER TABLE customers DROP COLUMN name;
