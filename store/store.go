// Package store keeps what an AHP host needs to come back after a restart
// or a crash: the session catalog, the latest snapshot of every session and
// chat channel with the actions sequenced after it, every chat's completed
// turns, and the highest serverSeq the host may have issued.
//
// Quick start:
//
//	st := store.NewMemory() // or sqlite.Open(dir, nil)
//	defer st.Close()
//	err := st.Write(ctx, store.Batch{
//		store.PutSession{Session: store.Session{URI: uri, ModifiedAt: now, Summary: summary}},
//		store.PutSnapshot{Snapshot: store.Snapshot{Channel: uri, Session: uri, Seq: 7, State: state}},
//	})
//	page, err := st.Sessions(ctx, nil, 100)
//	data, err := st.LoadSession(ctx, uri, 50)
//
// A store holds encoded documents (summaries, states, action envelopes,
// turns) keyed and ordered by the few fields it needs, and never looks
// inside them: package host decides what to write and how to rebuild its
// state from what it reads back.
//
// Every change goes through Write, which applies a Batch atomically: all of
// its operations are kept, or none is. A backend that returns nil from
// Write has made the batch durable to the degree it documents.
//
// This package holds the interface and the in-memory backend (NewMemory).
// Package store/sqlite is the embedded SQLite backend; package
// store/storetest is the suite every backend passes.
package store

import (
	"context"
	"errors"
	"fmt"
)

// Store is a host's durable memory. All methods are safe for concurrent
// use. Each context bounds its own call only.
type Store interface {
	// Write applies the operations of b in order, atomically: when it
	// returns nil every operation is kept, otherwise none is.
	Write(ctx context.Context, b Batch) error
	// Seq returns the highest serverSeq recorded, by SetSeq or by an
	// appended action, or 0 for an empty store.
	Seq(ctx context.Context) (int64, error)
	// Sessions returns up to limit catalog entries that come after the
	// position (nil means from the start), in catalog order: most recently
	// modified first, then by URI.
	Sessions(ctx context.Context, after *Position, limit int) ([]Session, error)
	// LoadSession returns a session's catalog entry and its stored
	// channels, each with its latest snapshot, the actions after it and
	// the recentTurns most recent completed turns. It returns an error
	// wrapping ErrNotFound when the catalog has no such session.
	LoadSession(ctx context.Context, uri string, recentTurns int) (*SessionData, error)
	// Turns returns the stored turns of a chat whose ordinals are in
	// [from, to), oldest first.
	Turns(ctx context.Context, chat string, from, to int64) ([]Turn, error)
	// Close releases the store; a second Close does nothing. Other calls
	// after Close return ErrClosed.
	Close() error
}

// Checker is implemented by stores that can check their own files
// between writes (see sqlite.Store.Check). The host calls Check about once
// a second while it has nothing to write. A nil error means sound; after
// an error, a second Check tells a repaired fault (nil) from a lasting one.
type Checker interface {
	Check(ctx context.Context) error
}

// Errors a store reports, wrapped with the details. Test with errors.Is.
var (
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
	// ErrNotFound: no such session.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: a batch breaks a rule of its operations (an empty URI,
	// an action sequenced at or below one already appended, ...).
	ErrInvalid = errors.New("invalid batch")
	// ErrLocked: another process holds the store.
	ErrLocked = errors.New("store in use by another process")
	// ErrCorrupt: the stored data cannot be read back.
	ErrCorrupt = errors.New("store corrupt")
	// ErrFull: the disk (or the store's size limit) is full.
	ErrFull = errors.New("no space left for the store")
)

// Session is one entry of the session catalog.
type Session struct {
	// URI is the session channel (ahp-session:/<id>).
	URI string
	// ModifiedAt orders the catalog, newest first; it is the summary's
	// modifiedAt (an RFC 3339 timestamp in UTC, which sorts as text).
	ModifiedAt string
	// Summary is the encoded SessionSummary.
	Summary []byte
	// Chats lists the URIs of the session's chats.
	Chats []string
	// Running reports that a turn was running in one of the session's
	// chats when the entry was written.
	Running bool
}

// Position is a place in the catalog order.
type Position struct {
	ModifiedAt string
	URI        string
}

// Snapshot is the state of one channel once the action with serverSeq Seq
// (and every action of the channel before it) has been applied.
type Snapshot struct {
	// Channel is the channel URI.
	Channel string
	// Session is the URI of the owning session; for a session channel it
	// is Channel itself.
	Session string
	// Seq is the serverSeq the state is current at.
	Seq int64
	// State is the encoded channel state. A chat's state is stored
	// without its completed turns, which are kept apart as Turn records.
	State []byte
}

// Action is one sequenced action of a session or chat channel.
type Action struct {
	// Seq is the action's serverSeq.
	Seq int64
	// Channel is the channel the action was applied to.
	Channel string
	// At is the host's clock when the action was applied, in Unix
	// milliseconds, so that replaying it stamps the same times.
	At int64
	// Envelope is the encoded ActionEnvelope.
	Envelope []byte
}

// Turn is one completed turn of a chat.
type Turn struct {
	// Chat is the chat URI.
	Chat string
	// Ordinal numbers the chat's completed turns from 0, oldest first.
	Ordinal int64
	// ID is the turn id.
	ID string
	// Data is the encoded Turn.
	Data []byte
}

// Channel is one stored channel as LoadSession returns it.
type Channel struct {
	// Snapshot is the channel's latest snapshot.
	Snapshot
	// Actions are the channel's actions sequenced after the snapshot, in
	// order.
	Actions []Action
	// Turns are the most recent completed turns (chats only), oldest
	// first.
	Turns []Turn
	// TurnCount is one more than the highest stored turn ordinal (0 when
	// the chat has none): the ordinal the next completed turn takes.
	TurnCount int64
}

// SessionData is a session as LoadSession returns it.
type SessionData struct {
	// Session is the catalog entry.
	Session Session
	// Channels are the session's stored channels: the session channel
	// first (when stored), then its chats by URI.
	Channels []Channel
}

// Batch is a list of operations that Write applies in order, atomically.
type Batch []Op

// Op is one operation of a batch: one of PutSession, DeleteSession,
// PutSnapshot, DeleteChannel, AppendAction, PutTurn, TruncateTurns and
// SetSeq.
type Op interface{ isOp() }

// PutSession inserts a catalog entry or replaces the one with the same URI.
type PutSession struct{ Session Session }

// DeleteSession removes a catalog entry together with every channel,
// action and turn of the session. Deleting an unknown session does
// nothing.
type DeleteSession struct{ URI string }

// PutSnapshot inserts a channel's snapshot or replaces the stored one, and
// drops the channel's actions sequenced at or before the snapshot: this is
// how the action log is compacted.
type PutSnapshot struct{ Snapshot Snapshot }

// DeleteChannel removes one channel with its actions and turns.
type DeleteChannel struct{ URI string }

// AppendAction adds an action to the log. Its Seq must be above every Seq
// appended before, in this batch or an earlier one.
type AppendAction struct{ Action Action }

// PutTurn inserts a completed turn or replaces the one with the same chat
// and ordinal.
type PutTurn struct{ Turn Turn }

// TruncateTurns drops the turns of a chat whose ordinals are Keep or more.
type TruncateTurns struct {
	Chat string
	Keep int64
}

// SetSeq records that the host may issue serverSeq values up to Seq. A
// value at or below the recorded one changes nothing.
type SetSeq struct{ Seq int64 }

// PutRecord inserts a record or replaces the one with the same kind and
// key. Records hold what a host keeps beside its sessions (automation
// definitions and runs): documents under a key, read back by kind.
type PutRecord struct{ Record Record }

// DeleteRecord drops a record; an unknown one is no change.
type DeleteRecord struct{ Kind, Key string }

// Record is one document kept under a kind and a key.
type Record struct {
	Kind string
	Key  string
	Data []byte
}

// Records is implemented by stores that keep records (PutRecord,
// DeleteRecord). Both stores of this module do.
type Records interface {
	// Records returns every record of a kind, ordered by key.
	Records(ctx context.Context, kind string) ([]Record, error)
}

func (PutRecord) isOp()     {}
func (DeleteRecord) isOp()  {}
func (PutSession) isOp()    {}
func (DeleteSession) isOp() {}
func (PutSnapshot) isOp()   {}
func (DeleteChannel) isOp() {}
func (AppendAction) isOp()  {}
func (PutTurn) isOp()       {}
func (TruncateTurns) isOp() {}
func (SetSeq) isOp()        {}

// Check reports the first operation of b that breaks a rule a backend can
// tell without reading what is stored: a missing URI, a negative ordinal,
// actions out of order within the batch. lastSeq is the highest action Seq
// already stored. Backends call it before applying anything; the error
// wraps ErrInvalid.
func (b Batch) Check(lastSeq int64) error {
	for i, op := range b {
		if msg := checkOp(op, &lastSeq); msg != "" {
			return fmt.Errorf("%w: operation %d (%T): %s", ErrInvalid, i, op, msg)
		}
	}
	return nil
}

func checkOp(op Op, lastSeq *int64) string {
	switch op := op.(type) {
	case PutSession:
		if op.Session.URI == "" {
			return "session URI is empty"
		}
	case DeleteSession:
		if op.URI == "" {
			return "session URI is empty"
		}
	case PutSnapshot:
		if op.Snapshot.Channel == "" || op.Snapshot.Session == "" {
			return "channel or session URI is empty"
		}
	case DeleteChannel:
		if op.URI == "" {
			return "channel URI is empty"
		}
	case AppendAction:
		if op.Action.Channel == "" {
			return "channel URI is empty"
		}
		if op.Action.Seq <= *lastSeq {
			return fmt.Sprintf("action seq %d is not above %d", op.Action.Seq, *lastSeq)
		}
		*lastSeq = op.Action.Seq
	case PutTurn:
		if op.Turn.Chat == "" || op.Turn.Ordinal < 0 {
			return "chat URI is empty or ordinal negative"
		}
	case TruncateTurns:
		if op.Chat == "" || op.Keep < 0 {
			return "chat URI is empty or keep negative"
		}
	case PutRecord:
		if op.Record.Kind == "" || op.Record.Key == "" {
			return "record kind or key is empty"
		}
	case DeleteRecord:
		if op.Kind == "" || op.Key == "" {
			return "record kind or key is empty"
		}
	case SetSeq:
	case nil:
		return "nil operation"
	default:
		return "unknown operation"
	}
	return ""
}
