ALTER TABLE customers DROP CONSTRAINT customers_email_key;

---- create above / drop below ----

ALTER TABLE customers ADD CONSTRAINT customers_email_key UNIQUE (email);
