-- Orders that are shipped once, and sign-ups with a token each.
CREATE TABLE orders (
  id         bigint PRIMARY KEY,
  status     text   NOT NULL,
  shipped_at timestamptz,
  ship_count int    NOT NULL DEFAULT 0
);
CREATE TABLE users (
  id    bigserial PRIMARY KEY,
  email text NOT NULL UNIQUE,
  token uuid NOT NULL
);
CREATE TABLE signups (
  id    bigserial PRIMARY KEY,
  email text NOT NULL,
  token uuid NOT NULL
);
