-- Loyalty balances, and the record of which jobs were processed.
CREATE TABLE customers (
  id     bigint PRIMARY KEY,
  points int    NOT NULL DEFAULT 0
);

-- One row per processed job, written in the same transaction as the job's
-- own writes. The key is what identifies "the same job": the queue's job ID,
-- or something derived from the payload.
CREATE TABLE processed_jobs (
  key          text PRIMARY KEY,
  processed_at timestamptz NOT NULL DEFAULT now()
);
