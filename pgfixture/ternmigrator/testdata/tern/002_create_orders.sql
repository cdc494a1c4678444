CREATE TABLE orders (
  id bigint PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES customers (id),
  total numeric NOT NULL
);
{{ template "shared/order_total.sql" . }}

---- create above / drop below ----

CREATE TABLE down_ran (version int);
DROP TABLE orders;
