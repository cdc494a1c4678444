CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers,
    total numeric(12,2) NOT NULL
);
INSERT INTO customers (email) VALUES ('ann@example.com');
