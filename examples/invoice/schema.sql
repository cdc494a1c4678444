-- Invoices that are emailed once.
CREATE TABLE invoices (
  id            bigint PRIMARY KEY,
  email         text   NOT NULL,
  amount_paise  bigint NOT NULL,
  email_sent_at timestamptz
);
