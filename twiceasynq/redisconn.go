package twiceasynq

import (
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// sharedRedis is a connection option that hands asynq an existing Redis
// client and keeps it open when asynq closes its client, server or
// inspector: what asynq.NewClientFromRedisClient and its siblings do since
// asynq v0.25.0, on every release twiceasynq supports (asynq.NewClient,
// NewServer and NewInspector take it).
func sharedRedis(c redis.UniversalClient) asynq.RedisConnOpt { return sharedConn{c} }

type sharedConn struct{ c redis.UniversalClient }

func (s sharedConn) MakeRedisClient() any { return unclosed{s.c} }

// unclosed is a Redis client whose Close leaves it open: its owner closes it.
type unclosed struct{ redis.UniversalClient }

func (unclosed) Close() error { return nil }
