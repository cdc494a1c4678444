-- Orders whose receipt email goes out once the order is paid.
CREATE TABLE orders (
  id              bigint PRIMARY KEY,
  email           text   NOT NULL,
  total_paise     bigint NOT NULL,
  receipt_sent_at timestamptz
);
