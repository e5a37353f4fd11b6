package sqlite

import (
	"context"
	"fmt"
)

// migrations[i] takes the schema from version i to version i+1. Append new
// steps; never edit one that has shipped.
var migrations = []string{
	// 1: the catalog, channel snapshots, the action log and turns.
	`
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('seq', 0), ('last_action_seq', 0);

CREATE TABLE sessions (
	uri         TEXT PRIMARY KEY,
	modified_at TEXT NOT NULL,
	summary     BLOB NOT NULL,
	chats       TEXT NOT NULL,
	running     INTEGER NOT NULL
);
CREATE INDEX sessions_by_modified ON sessions (modified_at DESC, uri);

CREATE TABLE channels (
	uri     TEXT PRIMARY KEY,
	session TEXT NOT NULL,
	seq     INTEGER NOT NULL,
	state   BLOB NOT NULL
);
CREATE INDEX channels_by_session ON channels (session);

CREATE TABLE actions (
	channel  TEXT NOT NULL,
	seq      INTEGER NOT NULL,
	at       INTEGER NOT NULL,
	envelope BLOB NOT NULL,
	PRIMARY KEY (channel, seq)
) WITHOUT ROWID;

CREATE TABLE turns (
	chat    TEXT NOT NULL,
	ordinal INTEGER NOT NULL,
	id      TEXT NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (chat, ordinal)
);
`,
	// 2: records kept beside the sessions (automations and their runs).
	`
CREATE TABLE records (
	kind TEXT NOT NULL,
	key  TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (kind, key)
) WITHOUT ROWID;
`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

// migrate brings the schema to SchemaVersion, one transaction per step.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return s.wrap("read the schema version", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("sqlite store %s: the schema is version %d, newer than this build knows (%d): use a newer ahpd", s.path, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.wrap("migrate", err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return s.wrap(fmt.Sprintf("migrate to schema version %d", v+1), err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return s.wrap("migrate", err)
		}
		if err := tx.Commit(); err != nil {
			return s.wrap("migrate", err)
		}
	}
	return nil
}
