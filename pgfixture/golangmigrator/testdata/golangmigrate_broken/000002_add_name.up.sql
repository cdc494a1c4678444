-- a typo in the type
ALTER TABLE customers
    ADD COLUMN name txet;
