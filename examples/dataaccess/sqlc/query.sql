-- name: AddPoints :exec
UPDATE customers SET points = points + sqlc.arg(points)::int WHERE id = sqlc.arg(customer_id);

-- name: RecordReward :execrows
INSERT INTO rewards (order_id, customer_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;
