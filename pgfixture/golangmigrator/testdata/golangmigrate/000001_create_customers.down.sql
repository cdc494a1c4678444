CREATE TABLE down_ran (version int);
DROP TABLE customers;
