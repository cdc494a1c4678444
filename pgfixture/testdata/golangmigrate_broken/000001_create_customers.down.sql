DROP TABLE customers;
