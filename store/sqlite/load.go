package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/store"
)

// The statements of LoadSession. A session comes back in four queries
// whatever the number of its chats: its catalog entry, its channels with
// their turn counts, the actions logged after each channel's snapshot, and
// the recent turns of each chat.
const (
	loadSessionQuery  = "SELECT uri, modified_at, summary, chats, running FROM sessions WHERE uri = ?"
	loadChannelsQuery = `SELECT uri, session, seq, state, (SELECT max(ordinal) + 1 FROM turns WHERE chat = channels.uri)
		FROM channels WHERE session = ?1 ORDER BY uri != ?1, uri`
	loadActionsQuery = `SELECT a.seq, a.channel, a.at, a.envelope FROM channels c
		JOIN actions a ON a.channel = c.uri AND a.seq > c.seq
		WHERE c.session = ? ORDER BY a.channel, a.seq`
	loadTurnsQuery = `SELECT t.chat, t.ordinal, t.id, t.data FROM channels c
		JOIN turns t ON t.chat = c.uri
		WHERE c.session = ?1 AND t.ordinal >= (SELECT max(ordinal) + 1 FROM turns WHERE chat = c.uri) - ?2
		ORDER BY t.chat, t.ordinal`
)

// The columns of each query, to name a value that does not convert.
var (
	sessionColumns = []string{"sessions.uri", "sessions.modified_at", "sessions.summary", "sessions.chats", "sessions.running"}
	channelColumns = []string{"channels.uri", "channels.session", "channels.seq", "channels.state", "the turn count"}
	actionColumns  = []string{"actions.seq", "actions.channel", "actions.at", "actions.envelope"}
	turnColumns    = []string{"turns.chat", "turns.ordinal", "turns.id", "turns.data"}
)

// maxLoadColumns is the widest of them.
const maxLoadColumns = 5

// never is the context LoadSession gives the driver: one that never ends,
// so that the driver starts no goroutine to watch it for each statement.
var never = context.Background()

// loadConn is the connection LoadSession reads through, with its
// statements prepared once on the driver's connection. Loads go to the
// driver directly: database/sql would cost, per load, a goroutine and a
// context for the transaction, a *sql.Stmt per query bound to it, its
// *sql.Rows, and a second copy of every blob. Guarded by Store.loadMu (or
// by Store.dbmu held for writing).
type loadConn struct {
	conn *sql.Conn
	// stmts are the prepared statements, closed with the connection. The
	// fields below are among them; all are used only inside conn.Raw,
	// which holds the driver connection.
	stmts                             []driver.Stmt
	begin, commit, rollback           driver.StmtExecContext
	session, channels, actions, turns driver.StmtQueryContext
	// between points to Store.betweenLoadQueries.
	between *func()
	// broken is set when the connection is left in a state the next load
	// cannot use (a transaction that did not end): it is then discarded.
	broken bool

	args [2]driver.NamedValue
	dest [maxLoadColumns]driver.Value
	row  row // the row each query reads into
}

// loadConnLocked returns the connection of loads, taking it from the
// pool and preparing its statements on first use. The caller holds dbmu
// for reading and loadMu.
func (s *Store) loadConnLocked(ctx context.Context) (*loadConn, error) {
	if s.load != nil {
		return s.load, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	l := &loadConn{conn: conn, between: &s.betweenLoadQueries}
	if err := conn.Raw(l.prepare); err != nil {
		conn.Close()
		return nil, err
	}
	s.load = l
	return l, nil
}

// prepare prepares the statements on the driver connection dc.
func (l *loadConn) prepare(dc any) error {
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("the driver's connection %T does not prepare statements with a context", dc)
	}
	prep := func(query string) (driver.Stmt, error) {
		st, err := pc.PrepareContext(never, query)
		if err != nil {
			return nil, fmt.Errorf("preparing %q: %w", query, err)
		}
		l.stmts = append(l.stmts, st)
		return st, nil
	}
	for _, p := range []struct {
		exec  *driver.StmtExecContext
		query *driver.StmtQueryContext
		sql   string
	}{
		{exec: &l.begin, sql: "BEGIN"},
		{exec: &l.commit, sql: "COMMIT"},
		{exec: &l.rollback, sql: "ROLLBACK"},
		{query: &l.session, sql: loadSessionQuery},
		{query: &l.channels, sql: loadChannelsQuery},
		{query: &l.actions, sql: loadActionsQuery},
		{query: &l.turns, sql: loadTurnsQuery},
	} {
		st, err := prep(p.sql)
		if err != nil {
			l.closeStmts()
			return err
		}
		var ok bool
		if p.exec != nil {
			*p.exec, ok = st.(driver.StmtExecContext)
		} else {
			*p.query, ok = st.(driver.StmtQueryContext)
		}
		if !ok {
			l.closeStmts()
			return fmt.Errorf("the driver's statement %T does not run with a context", st)
		}
	}
	return nil
}

// closeStmts closes the prepared statements; it runs inside conn.Raw.
func (l *loadConn) closeStmts() error {
	var first error
	for _, st := range l.stmts {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	l.stmts = nil
	return first
}

// close closes the statements and gives the connection back to the pool,
// before the database closes.
func (l *loadConn) close() error {
	err := l.conn.Raw(func(any) error { return l.closeStmts() })
	if cerr := l.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// closeLoadLocked closes the connection of loads, if one is open. The
// caller holds dbmu for writing.
func (s *Store) closeLoadLocked() error {
	if s.load == nil {
		return nil
	}
	err := s.load.close()
	s.load = nil
	return err
}

// LoadSession reads a session and its channels in one read transaction,
// so they are consistent with one another.
//
// Loads run one at a time on a connection of their own (the host reads
// the store from one goroutine anyway; the other reads use the pool). The
// driver gets a context that never ends, so that it watches none per
// statement; ctx is checked before the transaction and between its
// queries instead. A query that has started is not interrupted midway:
// each reads one session's rows by index, which takes far less than any
// deadline a caller sets.
func (s *Store) LoadSession(ctx context.Context, uri string, recentTurns int) (*store.SessionData, error) {
	s.dbmu.RLock()
	defer s.dbmu.RUnlock()
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap("load session", err)
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	l, err := s.loadConnLocked(ctx)
	if err != nil {
		return nil, s.wrap("load session", err)
	}
	var data *store.SessionData
	var lerr error
	err = l.conn.Raw(func(any) error {
		data, lerr = l.load(ctx, uri, recentTurns)
		if l.broken {
			// database/sql then closes the driver connection, which
			// must have no statement left.
			l.closeStmts()
			return driver.ErrBadConn
		}
		return nil
	})
	if err != nil {
		// The connection is gone (its statements with it): the next
		// load takes another.
		s.load = nil
		if lerr == nil {
			lerr = err
		}
	}
	if lerr != nil {
		if errors.Is(lerr, store.ErrNotFound) {
			return nil, fmt.Errorf("sqlite store: session %s: %w", uri, lerr)
		}
		return nil, s.wrap("load session", lerr)
	}
	return data, nil
}

// load runs the four queries in a read transaction. It runs inside
// conn.Raw.
func (l *loadConn) load(ctx context.Context, uri string, recentTurns int) (data *store.SessionData, err error) {
	if _, err := l.begin.ExecContext(never, nil); err != nil {
		l.fail()
		return nil, err
	}
	defer func() {
		clear(l.args[:])
		clear(l.dest[:]) // what the last rows held
		if err == nil {
			if _, err = l.commit.ExecContext(never, nil); err == nil {
				return
			}
			data = nil
		}
		if _, rerr := l.rollback.ExecContext(never, nil); rerr != nil {
			l.fail()
			err = fmt.Errorf("%w (and rolling back: %v)", err, rerr)
		}
	}()
	data = &store.SessionData{}
	l.args[0] = driver.NamedValue{Ordinal: 1, Value: uri}
	found := false
	err = l.each(ctx, l.session, l.args[:1], sessionColumns, func(r *row) {
		data.Session = store.Session{URI: r.text(0), ModifiedAt: r.text(1), Summary: r.blob(2)}
		chats := r.text(3)
		data.Session.Running = r.bool(4)
		if r.err == nil {
			data.Session.Chats, r.err = decodeChats(data.Session.URI, chats)
		}
		found = true
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.ErrNotFound
	}
	// The session channel and its chats, as a rule.
	data.Channels = make([]store.Channel, 0, 1+len(data.Session.Chats))
	err = l.each(ctx, l.channels, l.args[:1], channelColumns, func(r *row) {
		c := store.Channel{Snapshot: store.Snapshot{Channel: r.text(0), Session: r.text(1), Seq: r.int(2), State: r.blob(3)}}
		c.TurnCount = r.nullInt(4)
		data.Channels = append(data.Channels, c)
	})
	if err != nil {
		return nil, err
	}
	// At most a few channels: a linear search beats a map.
	channel := func(uri string) *store.Channel {
		for i := range data.Channels {
			if data.Channels[i].Channel == uri {
				return &data.Channels[i]
			}
		}
		return nil
	}
	for i := range data.Channels {
		if c := &data.Channels[i]; recentTurns > 0 && c.TurnCount > 0 {
			c.Turns = make([]store.Turn, 0, min(c.TurnCount, int64(recentTurns)))
		}
	}
	err = l.each(ctx, l.actions, l.args[:1], actionColumns, func(r *row) {
		a := store.Action{Seq: r.int(0), Channel: r.text(1), At: r.int(2), Envelope: r.blob(3)}
		if c := channel(a.Channel); c != nil && r.err == nil {
			c.Actions = append(c.Actions, a)
		}
	})
	if err != nil || recentTurns <= 0 {
		return data, err
	}
	l.args[1] = driver.NamedValue{Ordinal: 2, Value: int64(recentTurns)}
	err = l.each(ctx, l.turns, l.args[:2], turnColumns, func(r *row) {
		t := store.Turn{Chat: r.text(0), Ordinal: r.int(1), ID: r.text(2), Data: r.blob(3)}
		if c := channel(t.Chat); c != nil && r.err == nil {
			c.Turns = append(c.Turns, t)
		}
	})
	return data, err
}

// fail marks the connection broken: it may still be in a transaction.
func (l *loadConn) fail() { l.broken = true }

// each runs a query after checking ctx and calls f for each row, until
// the rows end or f sets the row's error.
func (l *loadConn) each(ctx context.Context, st driver.StmtQueryContext, args []driver.NamedValue, columns []string, f func(*row)) error {
	if hook := *l.between; hook != nil && st != l.session {
		hook()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, err := st.QueryContext(never, args)
	if err != nil {
		if errors.Is(err, driver.ErrBadConn) {
			l.fail()
		}
		return err
	}
	r := &l.row
	*r = row{values: l.dest[:len(columns)], columns: columns}
	for {
		if err = rows.Next(r.values); err != nil {
			break
		}
		if f(r); r.err != nil {
			err = r.err
			break
		}
	}
	cerr := rows.Close()
	if err == io.EOF {
		err = cerr
	}
	if errors.Is(err, driver.ErrBadConn) {
		l.fail()
	}
	return err
}

// row converts the values of one result row to the store's types as
// sql.Rows.Scan would: TEXT comes from the driver as a string, BLOB as a
// []byte, NULL as nil, and a value of another type stored in the column
// (SQLite keeps what it is given) converts as Scan converts it. The
// first value that does not convert sets err, as store.ErrCorrupt.
type row struct {
	values  []driver.Value
	columns []string
	err     error
}

func (r *row) fail(i int, err error) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %v", store.ErrCorrupt, r.columns[i], err)
	}
}

func (r *row) text(i int) string {
	switch v := r.values[i].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	var s sql.NullString
	if err := s.Scan(r.values[i]); err != nil || !s.Valid {
		r.fail(i, scanError(err, "string"))
	}
	return s.String
}

// blob returns a copy of the column's bytes: the driver's are only valid
// until the next row. (One allocation per blob: packing the blobs of a
// load into a few large ones saved a few allocations but no bytes.)
func (r *row) blob(i int) []byte {
	switch v := r.values[i].(type) {
	case []byte:
		return bytes.Clone(v)
	case string:
		return []byte(v)
	case nil:
		return nil
	}
	var b sql.Null[[]byte]
	if err := b.Scan(r.values[i]); err != nil {
		r.fail(i, err)
	}
	return b.V
}

func (r *row) int(i int) int64 {
	if v, ok := r.values[i].(int64); ok {
		return v
	}
	var n sql.NullInt64
	if err := n.Scan(r.values[i]); err != nil || !n.Valid {
		r.fail(i, scanError(err, "int64"))
	}
	return n.Int64
}

// nullInt is int with NULL read as 0.
func (r *row) nullInt(i int) int64 {
	if r.values[i] == nil {
		return 0
	}
	return r.int(i)
}

func (r *row) bool(i int) bool {
	if v, ok := r.values[i].(int64); ok && (v == 0 || v == 1) {
		return v == 1
	}
	var b sql.NullBool
	if err := b.Scan(r.values[i]); err != nil || !b.Valid {
		r.fail(i, scanError(err, "bool"))
	}
	return b.Bool
}

// scanError is err, or for a NULL (which the Null types accept) the error
// Scan gives.
func scanError(err error, typ string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("converting NULL to %s is unsupported", typ)
}

// decodeChats decodes a session's list of chats.
func decodeChats(uri, chats string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(chats), &out); err != nil {
		return nil, fmt.Errorf("%w: the chats of %s: %v", store.ErrCorrupt, uri, err)
	}
	return out, nil
}
