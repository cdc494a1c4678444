CREATE TABLE customers (
  id bigint PRIMARY KEY,
  email text NOT NULL
);
-- Production dropped this constraint in 003; a tool that ran drop sections
-- or re-applied this one out of order would bring it back.
ALTER TABLE customers ADD CONSTRAINT customers_email_key UNIQUE (email);

---- create above / drop below ----

DROP TABLE customers;
