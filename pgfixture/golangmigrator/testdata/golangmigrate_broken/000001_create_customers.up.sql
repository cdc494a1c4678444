CREATE TABLE customers (id bigserial PRIMARY KEY);
