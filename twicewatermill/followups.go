package twicewatermill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// Follow-ups (Job.Handlers): a handler that publishes through a
// watermill-sql publisher built on its own transaction
// (sql.NewPublisher(sql.TxFromPgx(tx), …)) inserts the message in the
// topic's table in that transaction: an outbox row, there exactly when the
// work committed. watermill-sql's subscribers of the topic deliver it once
// the transaction committed. After every scenario the check works those
// rows as they do, on the check's clock: each with the application's
// handler of its topic, inside Job.Middleware, acked or nacked as the
// router does, in the order of the rows (transaction, then offset). The
// rows stay in their tables, as watermill-sql keeps them, and are
// compared (volatileColumns left out).

// MessagesTableSQL is the CREATE TABLE of watermill-sql's table of topic's
// messages, as sql.DefaultPostgreSQLSchema creates it: put it in Job.Schema
// (the application's migrations), since a publisher on a transaction
// cannot create its table (AutoInitializeSchema is refused there).
func MessagesTableSQL(topic string) string {
	qs, err := wsql.DefaultPostgreSQLSchema{InitializeSchemaWithoutTransaction: true}.
		SchemaInitializingQueries(wsql.SchemaInitializingQueriesParams{Topic: topic})
	if err != nil || len(qs) == 0 {
		return fmt.Sprintf("-- watermill-sql gave no schema for topic %q: %v", topic, err)
	}
	var b strings.Builder
	for _, q := range qs {
		b.WriteString(strings.TrimSpace(q.Query))
		b.WriteString("\n")
	}
	return b.String()
}

// outboxRow is one row of a watermill-sql message table.
type outboxRow struct {
	topic    string
	offset   int64
	uuid     string
	payload  []byte
	metadata message.Metadata
}

// key is the row's name as a follow-up (FollowUp.Key).
func (r outboxRow) key() string { return fmt.Sprintf("%s#%d", r.topic, r.offset) }

// messagesPrefix is the prefix of sql.DefaultPostgreSQLSchema's message
// tables; its offsets tables start with offsetsPrefix.
const (
	messagesPrefix = "watermill_"
	offsetsPrefix  = "watermill_offsets_"
)

// outboxRows reads the rows of every watermill-sql message table in the
// order its subscribers deliver them: by transaction, then offset.
func outboxRows(ctx context.Context, db *pgxpool.Pool) ([]outboxRow, error) {
	rows, err := db.Query(ctx, `
SELECT table_name FROM information_schema.tables
WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
  AND starts_with(table_name, $1) AND NOT starts_with(table_name, $2)
ORDER BY table_name`, messagesPrefix, offsetsPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing watermill-sql's message tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing watermill-sql's message tables: %w", err)
	}
	if len(tables) == 0 {
		return nil, nil
	}
	var union []string
	for _, t := range tables {
		union = append(union, fmt.Sprintf(`SELECT %s AS topic, "offset", transaction_id::text::numeric AS tx, uuid, payload::text, metadata::text FROM %s`,
			quoteLiteral(strings.TrimPrefix(t, messagesPrefix)), pgx.Identifier{t}.Sanitize()))
	}
	rows, err = db.Query(ctx, strings.Join(union, " UNION ALL ")+` ORDER BY tx, "offset", topic`)
	if err != nil {
		return nil, fmt.Errorf("reading watermill-sql's message tables: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxRow, error) {
		var o outboxRow
		var tx any
		var payload, meta *string
		if err := r.Scan(&o.topic, &o.offset, &tx, &o.uuid, &payload, &meta); err != nil {
			return o, err
		}
		if payload != nil {
			o.payload = []byte(*payload)
		}
		o.metadata = message.Metadata{}
		if meta != nil && *meta != "" && *meta != "null" {
			if err := json.Unmarshal([]byte(*meta), &o.metadata); err != nil {
				return o, fmt.Errorf("the metadata of %s is not watermill's (a JSON object of strings): %w", o.key(), err)
			}
		}
		return o, nil
	})
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pending lists the messages in watermill-sql's tables as follow-ups, in
// the order its subscribers deliver them. A message of a topic Job.Handlers
// has no handler for has no Run.
func (q *queue) pending(ctx context.Context, db *pgxpool.Pool) ([]twice.FollowUp, error) {
	found, err := outboxRows(ctx, db)
	if err != nil {
		return nil, err
	}
	topics := q.topics()
	var out []twice.FollowUp
	for _, r := range found {
		f := twice.FollowUp{Key: r.key(), Kind: "message on " + r.topic}
		if topics == nil || topics[r.topic] {
			f.Run = q.workFollowUp(r)
		}
		out = append(out, f)
	}
	return out, nil
}

// topics are the topics Job.Handlers consumes; nil when its function
// cannot build them without a real attempt (every topic counts then).
func (q *queue) topics() (set map[string]bool) {
	defer func() {
		if recover() != nil {
			set = nil
		}
	}()
	set = map[string]bool{}
	for t := range q.job.Handlers(&twice.Attempt{}) {
		set[t] = true
	}
	return set
}

// workFollowUp is one delivery of the message in row r: the router calling
// the handler of its topic inside Job.Middleware, then the ack.
func (q *queue) workFollowUp(r outboxRow) func(ctx context.Context, a *twice.Attempt) error {
	return func(ctx context.Context, a *twice.Attempt) error {
		h := q.job.Handlers(a)[r.topic]
		if h == nil {
			return fmt.Errorf("twicewatermill: Job.Handlers has no handler for topic %q when the attempt runs (it had one when asked with an empty attempt)", r.topic)
		}
		msg := message.NewMessage(r.uuid, r.payload)
		for k, v := range r.metadata {
			msg.Metadata.Set(k, v)
		}
		return q.deliver(ctx, a, msg, func(m *message.Message) ([]*message.Message, error) { return nil, h(m) }, "", nil)
	}
}
