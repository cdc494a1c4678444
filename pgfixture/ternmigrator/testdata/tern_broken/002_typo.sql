CREATE TABLE b (
  id int,
  name txet
);
---- create above / drop below ----
DROP TABLE b;
