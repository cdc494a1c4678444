CREATE TABLE a (id int);
