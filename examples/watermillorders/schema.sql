CREATE TABLE customers (id bigint PRIMARY KEY, points int NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL);
CREATE TABLE processed_orders (order_id bigint PRIMARY KEY);
CREATE TABLE seen_messages (uuid text NOT NULL);

-- watermill-sql's table of the receipts topic (twicewatermill.MessagesTableSQL("receipts")):
-- a publisher on the handler's transaction cannot create it.
CREATE TABLE IF NOT EXISTS "watermill_receipts" (
	"offset" BIGSERIAL,
	"uuid" VARCHAR(36) NOT NULL,
	"created_at" TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
	"payload" JSON DEFAULT NULL,
	"metadata" JSON DEFAULT NULL,
	"transaction_id" xid8 NOT NULL,
	PRIMARY KEY ("transaction_id", "offset")
);
