package host

import (
	"encoding/base64"
	"errors"
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// turnsPageSize is how many older turns one fetchTurns returns.
const turnsPageSize = 50

// tailView returns a copy of the chat state holding only the last n
// completed turns, with a cursor for fetching the older ones. The host's
// own state keeps every turn.
func tailView(c *protocol.ChatState, n int) *protocol.ChatState {
	if n < 0 || n >= len(c.Turns) {
		return c
	}
	v := *c
	start := len(c.Turns) - n
	v.Turns = c.Turns[start:len(c.Turns):len(c.Turns)]
	v.TurnsNextCursor = protocol.Ptr(turnsCursor(c.Turns[start].ID))
	return &v
}

// turnsCursor encodes "the turns before this one" as an opaque cursor.
func turnsCursor(turnID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("before:" + turnID))
}

var errBadCursor = errors.New("unknown or malformed cursor")

// turnsPage returns the chat/turnsLoaded action holding the page of turns
// that precede the cursor, and the cursor of the page before it.
func turnsPage(c *protocol.ChatState, cursor *string) (*protocol.ChatTurnsLoadedAction, error) {
	if cursor == nil {
		return nil, errBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err != nil || len(raw) < len("before:") || string(raw[:len("before:")]) != "before:" {
		return nil, errBadCursor
	}
	id := string(raw[len("before:"):])
	end := slices.IndexFunc(c.Turns, func(t protocol.Turn) bool { return t.ID == id })
	if end < 0 {
		return nil, errBadCursor
	}
	start := max(0, end-turnsPageSize)
	a := &protocol.ChatTurnsLoadedAction{Turns: slices.Clone(c.Turns[start:end])}
	if start > 0 {
		a.TurnsNextCursor = protocol.Ptr(turnsCursor(c.Turns[start].ID))
	}
	return a, nil
}
