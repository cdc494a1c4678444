-- The application's tables; River's own (river_job and the others) are
-- added by its migrations before them.
CREATE TABLE customers (
  id     bigint PRIMARY KEY,
  name   text   NOT NULL,
  points int    NOT NULL DEFAULT 0
);

CREATE TABLE orders (
  id          bigint PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES customers,
  status      text   NOT NULL
);

CREATE TABLE invoices (
  id            bigint PRIMARY KEY,
  email         text   NOT NULL,
  amount_paise  bigint NOT NULL,
  email_sent_at timestamptz
);
