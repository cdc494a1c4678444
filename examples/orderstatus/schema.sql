-- Orders move placed → packed → shipped → delivered → closed (closed: the
-- return window is over).
CREATE TABLE orders (
  id     bigint PRIMARY KEY,
  status text   NOT NULL CHECK (status IN ('placed', 'packed', 'shipped', 'delivered', 'closed'))
);
