ALTER TABLE customers DROP COLUMN name;
