-- Loyalty points: a balance per customer, and a record of every reward.

CREATE TABLE customers (
  id     bigint PRIMARY KEY,
  name   text   NOT NULL,
  points int    NOT NULL DEFAULT 0
);

-- The fixed form's ledger: the database refuses a second reward for the
-- same order and reason.
CREATE TABLE points_ledger (
  id          bigserial PRIMARY KEY,
  customer_id bigint NOT NULL,
  order_id    bigint NOT NULL,
  reason      text   NOT NULL,
  points      int    NOT NULL,
  UNIQUE (order_id, reason)
);

-- The check-then-act form's log: the same columns and no unique constraint.
-- Only the application's `if` stands between a reward and its duplicate.
CREATE TABLE reward_log (
  id          bigserial PRIMARY KEY,
  customer_id bigint NOT NULL,
  order_id    bigint NOT NULL,
  reason      text   NOT NULL,
  points      int    NOT NULL
);
