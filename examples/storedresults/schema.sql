-- Orders with the time they were promised by, and the compensation paid to
-- customers whose order came late.
CREATE TABLE orders (
  id          bigint      PRIMARY KEY,
  customer_id bigint      NOT NULL,
  promised_at timestamptz NOT NULL
);

CREATE TABLE compensations (
  order_id     bigint PRIMARY KEY REFERENCES orders (id),
  amount_paise bigint NOT NULL CHECK (amount_paise > 0),
  provider_id  text   -- set once the provider has paid
);
