-- Refunds issued for orders, recorded once Stripe has made them.
CREATE TABLE refunds (
  order_id      bigint PRIMARY KEY,
  amount_cents  bigint NOT NULL CHECK (amount_cents > 0),
  stripe_refund text   NOT NULL
);
