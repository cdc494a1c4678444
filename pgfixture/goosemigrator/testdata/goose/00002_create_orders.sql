-- +goose Up
CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers,
    total numeric(12,2) NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION order_total(o orders) RETURNS numeric AS $$
BEGIN
    RETURN o.total;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

-- +goose Down
CREATE TABLE down_ran (version int);
DROP FUNCTION order_total(orders);
DROP TABLE orders;
