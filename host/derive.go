package host

import (
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// chatSummary is the catalog entry of a chat: the summary fields ChatState
// carries inline.
func chatSummary(c *protocol.ChatState) protocol.ChatSummary {
	return protocol.ChatSummary{
		Resource:           c.Resource,
		Title:              c.Title,
		Status:             c.Status,
		Activity:           c.Activity,
		ModifiedAt:         c.ModifiedAt,
		Origin:             c.Origin,
		Movable:            c.Movable,
		Interactivity:      c.Interactivity,
		WorkingDirectories: c.WorkingDirectories,
	}
}

// syncChatSummaryLocked keeps the session's chat catalog consistent with
// the chat's own state, as the chat channel page asks producers to do:
// changed fields go out as session/chatUpdated, cleared ones as nulls.
func (h *Host) syncChatSummaryLocked(s *session, chat *protocol.ChatState) {
	sch := h.channels[s.uri]
	if sch == nil {
		return
	}
	st := sch.state.(*protocol.SessionState)
	i := slices.IndexFunc(st.Chats, func(c protocol.ChatSummary) bool { return c.Resource == chat.Resource })
	if i < 0 {
		return
	}
	old, cur := st.Chats[i], chatSummary(chat)
	var ch protocol.SessionChatUpdatedActionChanges
	changed := false
	clear := func(name string) { ch.Cleared = append(ch.Cleared, name) }
	if old.Title != cur.Title {
		ch.Title, changed = &cur.Title, true
	}
	if old.Status != cur.Status {
		ch.Status, changed = &cur.Status, true
	}
	if old.ModifiedAt != cur.ModifiedAt {
		ch.ModifiedAt, changed = &cur.ModifiedAt, true
	}
	if !equalPtr(old.Activity, cur.Activity) {
		if ch.Activity, changed = cur.Activity, true; cur.Activity == nil {
			clear("activity")
		}
	}
	if !slices.Equal(old.WorkingDirectories, cur.WorkingDirectories) {
		if ch.WorkingDirectories, changed = cur.WorkingDirectories, true; cur.WorkingDirectories == nil {
			clear("workingDirectories")
		}
	}
	if !equalPtr(old.Interactivity, cur.Interactivity) {
		if ch.Interactivity, changed = cur.Interactivity, true; cur.Interactivity == nil {
			clear("interactivity")
		}
	}
	if !equalPtr(old.Movable, cur.Movable) {
		if ch.Movable, changed = cur.Movable, true; cur.Movable == nil {
			clear("movable")
		}
	}
	if changed {
		h.commitLocked(sch, &protocol.SessionChatUpdatedAction{Chat: chat.Resource, Changes: ch}, nil)
	}
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// syncInputNeededLocked mirrors the chat's outstanding input requests and
// tool confirmations into the session's inputNeeded list, so clients
// watching only the session see what blocks it.
func (h *Host) syncInputNeededLocked(s *session, chat *protocol.ChatState) {
	sch := h.channels[s.uri]
	if sch == nil {
		return
	}
	st := sch.state.(*protocol.SessionState)
	want := inputRequests(chat)
	prefix := chat.Resource + "#"
	// Remove entries of this chat that are no longer outstanding.
	for _, r := range st.InputNeeded {
		id := reducer.InputRequestID(r)
		if len(id) > len(prefix) && id[:len(prefix)] == prefix {
			if _, still := want[id]; !still {
				h.commitLocked(sch, &protocol.SessionInputNeededRemovedAction{ID: id}, nil)
			}
		}
	}
	// Add new ones, in the chat's order.
	for _, id := range sortedKeys(want) {
		st := h.channels[s.uri].state.(*protocol.SessionState)
		if !slices.ContainsFunc(st.InputNeeded, func(r protocol.SessionInputRequest) bool { return reducer.InputRequestID(r) == id }) {
			h.commitLocked(sch, &protocol.SessionInputNeededSetAction{Request: want[id]}, nil)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// inputRequests lists what the chat's active turn waits on, keyed by the
// session-level id "<chat>#<request or tool call id>".
func inputRequests(chat *protocol.ChatState) map[string]protocol.SessionInputRequest {
	out := map[string]protocol.SessionInputRequest{}
	t := chat.ActiveTurn
	if t == nil {
		return out
	}
	for _, part := range t.ResponseParts {
		switch p := part.(type) {
		case *protocol.InputRequestResponsePart:
			if p.Response == nil {
				id := chat.Resource + "#" + p.Request.ID
				out[id] = &protocol.SessionChatInputRequest{ID: id, Chat: chat.Resource, Request: p.Request}
			}
		case *protocol.ToolCallResponsePart:
			switch tc := p.ToolCall.(type) {
			case *protocol.ToolCallPendingConfirmationState:
				id := chat.Resource + "#" + tc.ToolCallID
				out[id] = &protocol.SessionToolConfirmationRequest{ID: id, Chat: chat.Resource, TurnID: t.ID, ToolCall: tc}
			case *protocol.ToolCallPendingResultConfirmationState:
				id := chat.Resource + "#" + tc.ToolCallID
				out[id] = &protocol.SessionToolConfirmationRequest{ID: id, Chat: chat.Resource, TurnID: t.ID, ToolCall: tc}
			}
		}
	}
	return out
}

// consumeQueuedLocked starts the next queued message when the chat is idle,
// as the chat channel page describes: remove it from the queue, then start
// a turn carrying it. rd is what the running step read (nil outside one).
func (h *Host) consumeQueuedLocked(rd *storeReads, ch *channel, chat *protocol.ChatState) {
	// The two commits below come back here (every chat commit does): the
	// chat is idle between them, and must not consume its next message
	// there.
	if ch.chat.consuming || chat.ActiveTurn != nil || len(chat.QueuedMessages) == 0 {
		return
	}
	ch.chat.consuming = true
	defer func() { ch.chat.consuming = false }()
	next := chat.QueuedMessages[0]
	h.commitReadLocked(rd, ch, &protocol.ChatPendingMessageRemovedAction{Kind: protocol.PendingMessageKindQueued, ID: next.ID}, nil)
	h.commitReadLocked(rd, ch, &protocol.ChatTurnStartedAction{
		TurnID:          h.opts.NewID(),
		StartedAt:       h.now(),
		Message:         next.Message,
		QueuedMessageID: &next.ID,
	}, nil)
}

// consumeSteeringLocked consumes the chat's steering message when a turn
// has just started, and returns it: steering messages set while the chat
// is idle are stored and consumed once a turn becomes active (chat channel
// page, "Steering Messages"). Consuming is a chat/pendingMessageRemoved;
// the agent gets the message with the turn.
func (h *Host) consumeSteeringLocked(ch *channel, a protocol.StateAction) *protocol.PendingMessage {
	if _, ok := a.(*protocol.ChatTurnStartedAction); !ok {
		return nil
	}
	chat := ch.state.(*protocol.ChatState)
	if chat.ActiveTurn == nil || chat.SteeringMessage == nil {
		return nil
	}
	m := chat.SteeringMessage
	h.commitLocked(ch, &protocol.ChatPendingMessageRemovedAction{Kind: protocol.PendingMessageKindSteering, ID: m.ID}, nil)
	return m
}

// failClientToolsLocked ends the tool calls a client was running for the
// session's chats once it is no longer one of the session's active
// clients. SessionActiveClientRemovedAction: the host SHOULD cancel that
// client's in-flight tool calls with chat/toolCallComplete and
// result.success false. The agent is told, as it would be of the client's
// own completion.
func (h *Host) failClientToolsLocked(s *session, clientID string) {
	for _, uri := range s.chatURIs {
		ch := s.chats[uri]
		if ch == nil {
			continue
		}
		t := ch.state.(*protocol.ChatState).ActiveTurn
		if t == nil {
			continue
		}
		for _, part := range t.ResponseParts {
			p, ok := part.(*protocol.ToolCallResponsePart)
			if !ok {
				continue
			}
			run, ok := p.ToolCall.(*protocol.ToolCallRunningState)
			if !ok {
				continue
			}
			if cc, ok := run.Contributor.(*protocol.ToolCallClientContributor); !ok || cc.ClientID != clientID {
				continue
			}
			msg := "The client running this tool left the session."
			a := &protocol.ChatToolCallCompleteAction{TurnID: t.ID, ToolCallID: run.ToolCallID, Result: protocol.ToolCallResult{
				Success:          false,
				PastTenseMessage: protocol.PlainText(msg),
				Error:            &protocol.ToolCallResultError{Message: msg},
			}}
			h.commitLocked(ch, a, nil)
			s.deliver(agent.Event{Channel: ch.uri, Action: a, Chat: ch.state.(*protocol.ChatState)})
		}
	}
}

// summaryLocked computes the session's catalog entry from its state and
// its chats, by the aggregation rules of the session channel page.
func (h *Host) summaryLocked(s *session) protocol.SessionSummary {
	st := h.channels[s.uri].state.(*protocol.SessionState)
	modified := s.modifiedAt
	if m, ok := reducer.SummaryModifiedAt(st.Chats); ok && m > modified {
		modified = m
	}
	return protocol.SessionSummary{
		Resource:           s.uri,
		Provider:           st.Provider,
		Title:              st.Title,
		Status:             reducer.SummaryStatus(st),
		Activity:           reducer.SummaryActivity(st),
		Origin:             st.Origin,
		Project:            st.Project,
		WorkingDirectories: st.WorkingDirectories,
		Annotations:        st.Annotations,
		CreatedAt:          s.createdAt,
		ModifiedAt:         modified,
		Meta:               memoMeta(s.memo),
		Chats:              sessionChats(st.Chats),
		DefaultChat:        st.DefaultChat,
		Changes:            reducer.SummaryChanges(st.Chats),
	}
}

// sessionChats is the lightweight chat catalog of a session summary, in
// the session's catalog order (SessionSummary.chats), with each chat's
// status, read and archived flags included.
func sessionChats(chats []protocol.ChatSummary) []protocol.SessionChatSummary {
	out := make([]protocol.SessionChatSummary, len(chats))
	for i, c := range chats {
		out[i] = protocol.SessionChatSummary{
			Resource:      c.Resource,
			Title:         c.Title,
			Origin:        c.Origin,
			Interactivity: c.Interactivity,
			Status:        protocol.Ptr(c.Status),
			Changes:       c.Changes,
		}
	}
	return out
}

// sameSessionChats reports whether two summary chat catalogs are equal.
func sameSessionChats(a, b []protocol.SessionChatSummary) bool {
	return slices.EqualFunc(a, b, func(x, y protocol.SessionChatSummary) bool {
		return x.Resource == y.Resource && x.Title == y.Title && equalPtr(x.Interactivity, y.Interactivity) &&
			equalPtr(x.Status, y.Status) && sameChanges(x.Changes, y.Changes) && sameOrigin(x.Origin, y.Origin)
	})
}

// sameChanges reports whether two changes summaries hold the same counts.
func sameChanges(a, b *protocol.ChangesSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equalPtr(a.Additions, b.Additions) && equalPtr(a.Deletions, b.Deletions) && equalPtr(a.Files, b.Files)
}

// sameOrigin compares two chat origins by their encoding; origins are set
// when a chat is created and rarely compared.
func sameOrigin(a, b protocol.ChatOrigin) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	x, err1 := protocol.Marshal(a)
	y, err2 := protocol.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// memoKey is the _meta key of a session summary under which the host keeps
// what the session's agent asked it to remember.
const memoKey = "ahp-go/agent"

// memoMeta encodes an agent's memo as summary _meta; nil when empty.
func memoMeta(memo map[string]string) map[string]jsontext.Value {
	if len(memo) == 0 {
		return nil
	}
	data, err := protocol.Marshal(memo)
	if err != nil {
		return nil
	}
	return map[string]jsontext.Value{memoKey: data}
}

// memoOf decodes an agent's memo from summary _meta.
func memoOf(meta map[string]jsontext.Value) map[string]string {
	raw, ok := meta[memoKey]
	if !ok {
		return nil
	}
	var memo map[string]string
	if protocol.Unmarshal(raw, &memo) != nil {
		return nil
	}
	return memo
}

// syncSessionSummaryLocked announces changes of a session's catalog entry
// with root/sessionSummaryChanged, and reports whether there were any.
func (h *Host) syncSessionSummaryLocked(s *session) bool {
	if _, ok := h.channels[s.uri]; !ok {
		return false
	}
	old, cur := s.summary, h.summaryLocked(s)
	var ch protocol.PartialSessionSummary
	changed := false
	if old.Title != cur.Title {
		ch.Title, changed = &cur.Title, true
	}
	if old.Status != cur.Status {
		ch.Status, changed = &cur.Status, true
	}
	if !equalPtr(old.Activity, cur.Activity) {
		if ch.Activity, changed = cur.Activity, true; cur.Activity == nil {
			ch.Cleared = append(ch.Cleared, "activity")
		}
	}
	if old.ModifiedAt != cur.ModifiedAt {
		ch.ModifiedAt, changed = &cur.ModifiedAt, true
	}
	if !slices.Equal(old.WorkingDirectories, cur.WorkingDirectories) {
		ch.WorkingDirectories, changed = cur.WorkingDirectories, true
	}
	if !sameChanges(old.Changes, cur.Changes) {
		if ch.Changes, changed = cur.Changes, true; cur.Changes == nil {
			ch.Cleared = append(ch.Cleared, "changes")
		}
	}
	if !sameSessionChats(old.Chats, cur.Chats) {
		ch.Chats, changed = cur.Chats, true
	}
	if !equalPtr(old.DefaultChat, cur.DefaultChat) {
		if ch.DefaultChat, changed = cur.DefaultChat, true; cur.DefaultChat == nil {
			ch.Cleared = append(ch.Cleared, "defaultChat")
		}
	}
	if !changed {
		return false
	}
	h.setSummaryLocked(s, cur)
	h.broadcastLocked(protocol.RootURI, "root/sessionSummaryChanged", &protocol.SessionSummaryChangedParams{
		Channel: protocol.RootURI,
		Session: s.uri,
		Changes: ch,
	})
	return true
}
