package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/host/internal/check"
	"github.com/ahp-go/ahp/protocol"
)

// dispatchClient validates a client action and commits it, or echoes it
// back to the sender with a rejection reason. An action on a channel the
// host does not know is dropped silently, as the session and chat channel
// pages require. What the action needs from the store is read first,
// outside the lock.
func (h *Host) dispatchClient(ctx context.Context, c *conn, p *protocol.DispatchActionParams, missing *protocol.MissingError) {
	err := h.locked(ctx, h.dispatchClientStep(c, p, missing))
	if err == nil {
		return
	}
	h.log.Error("reading from the store failed", "channel", clip(p.Channel, maxLoggedValue), "err", err)
	if p.Action != nil {
		h.mu.Lock()
		origin := &protocol.ActionOrigin{ClientID: c.clientID, ClientSeq: p.ClientSeq}
		if !c.gone {
			a := c.view.UpAction(p.Channel, p.Action)
			c.sendLocked(h.privateEnvelope(c.view, p.Channel, a, origin, "the host could not read this channel: "+err.Error()))
		}
		h.mu.Unlock()
	}
}

// rejectUndecodable answers a dispatchAction whose params did not decode
// (a member of the wrong JSON kind, say): the action is echoed to the
// sender alone, with the reason, when its channel is known and its
// clientSeq can be read, so that the client can drop its optimistic copy;
// otherwise it is dropped and logged.
func (h *Host) rejectUndecodable(ctx context.Context, c *conn, params jsontext.Value, decodeErr error) {
	reason := decodeErr.Error()
	if e, ok := decodeErr.(*protocol.Error); ok {
		reason = strings.TrimPrefix(e.Message, "dispatchAction: ")
	}
	var p struct {
		Channel   string         `json:"channel"`
		ClientSeq int64          `json:"clientSeq"`
		Action    jsontext.Value `json:"action"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Channel == "" {
		h.log.Debug("dispatchAction with bad params dropped", "client", clip(c.id(), maxLoggedValue), "err", clip(reason, maxLoggedValue))
		return
	}
	// The echo carries the action's type alone: what the client sent does
	// not decode, so it cannot be echoed in full to a client whose decoder
	// is as strict as this one.
	action := &protocol.Unknown{Raw: jsontext.Value(`{}`)}
	var tag struct {
		Type string `json:"type"`
	}
	if p.Action.Kind() == '{' && json.Unmarshal(p.Action, &tag) == nil && tag.Type != "" {
		action.Tag = tag.Type
		if b, err := json.Marshal(tag); err == nil {
			action.Raw = b
		}
	}
	err := h.locked(ctx, func(rd *storeReads) (change, error) {
		if c.gone {
			return nil, nil
		}
		ch, err := h.channelLocked(rd, p.Channel)
		if err != nil || ch == nil {
			return nil, err
		}
		return func() error {
			h.log.Debug("client action rejected", "client", clip(c.clientID, maxLoggedValue), "channel", clip(p.Channel, maxLoggedValue), "type", clip(action.Tag, maxLoggedValue), "reason", clip(reason, maxLoggedValue))
			c.sendLocked(h.privateEnvelope(c.view, p.Channel, action, &protocol.ActionOrigin{ClientID: c.clientID, ClientSeq: p.ClientSeq}, reason))
			return nil
		}, nil
	})
	if err != nil {
		h.log.Error("reading from the store failed", "channel", clip(p.Channel, maxLoggedValue), "err", err)
	}
}

// dispatchClientStep is the step (see step) of a client action: it reads
// the channel and what validating the action needs, then commits the
// action or echoes it back to its sender with the rejection.
func (h *Host) dispatchClientStep(c *conn, p *protocol.DispatchActionParams, missing *protocol.MissingError) step {
	return func(rd *storeReads) (change, error) {
		if c.gone {
			return nil, nil
		}
		origin := &protocol.ActionOrigin{ClientID: c.clientID, ClientSeq: p.ClientSeq}
		ch, err := h.channelLocked(rd, p.Channel)
		if err != nil {
			return nil, err
		}
		if ch == nil {
			return func() error {
				h.log.Debug("action on an unknown channel ignored", "client", clip(c.clientID, maxLoggedValue), "channel", clip(p.Channel, maxLoggedValue))
				return nil
			}, nil
		}
		if p.Action == nil {
			return func() error {
				c.sendLocked(h.privateEnvelope(c.view, p.Channel, &protocol.Unknown{Raw: []byte(`{}`)}, origin, "missing action"))
				return nil
			}, nil
		}
		// An older version's action is validated and applied in its 1.x
		// shape; what coming up supplied is not missing.
		a := c.view.UpAction(p.Channel, p.Action)
		var absent *protocol.MissingError
		if err := c.view.UpMissing(missing, a); err != nil {
			absent = err.(*protocol.MissingError)
		}
		err = check.Members(c.version, a.Type(), absent)
		if err == nil {
			err = h.validateLocked(rd, c, ch, a)
		}
		if err == nil {
			if ferr := h.jr.Failing(); ferr != nil {
				err = check.Rejectf("the host cannot save changes right now: %v", ferr)
			}
		}
		var load *protocol.ChatTurnsLoadedAction
		if err == nil {
			load, err = h.truncationLoadLocked(rd, ch, a)
		}
		var rej *check.Rejection
		if errors.As(err, &rej) {
			return func() error {
				h.log.Debug("client action rejected", "client", clip(c.clientID, maxLoggedValue), "channel", clip(p.Channel, maxLoggedValue), "type", clip(a.Type(), maxLoggedValue), "reason", clip(rej.Reason, maxLoggedValue))
				c.sendLocked(h.privateEnvelope(c.view, p.Channel, a, origin, rej.Reason))
				return nil
			}, nil
		}
		if err != nil {
			return nil, err
		}
		return func() error {
			if load != nil {
				h.loadOlderTurnsLocked(ch, load)
			}
			if ch.kind == protocol.ChannelSession && ch.session != nil {
				ch.session.modifiedAt = h.now()
			}
			switch a := a.(type) {
			case *protocol.ChatTurnStartedAction:
				h.pinAttachmentsLocked(&a.Message)
			case *protocol.ChatPendingMessageSetAction:
				h.pinAttachmentsLocked(&a.Message)
			}
			h.commitReadLocked(rd, ch, a, origin)
			if ch.owner != nil {
				ch.owner.ActionAccepted(clientLocked(c), a)
			}
			return nil
		}, nil
	}
}

// truncationLoadLocked finds the turn a chat/truncated names, which must
// be in the chat's state, as the chat channel page asks: for a turn older
// than the window it returns the chat/turnsLoaded of the turns from it up
// to the window, read from the store, for loadOlderTurnsLocked to load for
// every subscriber before the truncation. It returns nil when there is
// nothing to load, a *check.Rejection when the turn does not exist, and a
// *storeMiss while it still needs turns from the store.
func (h *Host) truncationLoadLocked(rd *storeReads, ch *channel, a protocol.StateAction) (*protocol.ChatTurnsLoadedAction, error) {
	tr, ok := a.(*protocol.ChatTruncatedAction)
	if !ok || tr.TurnID == nil {
		return nil, nil
	}
	cs := ch.state.(*protocol.ChatState)
	if slices.ContainsFunc(cs.Turns, func(t protocol.Turn) bool { return t.ID == *tr.TurnID }) {
		return nil, nil
	}
	// Read back page by page until the turn shows up.
	const page = 200
	var older []protocol.Turn
	for end := ch.chat.base; end > 0; end -= page {
		start := max(0, end-page)
		turns, err := storedTurnsLocked(rd, ch, start, end)
		if err != nil {
			return nil, err
		}
		older = append(turns, older...)
		if i := slices.IndexFunc(turns, func(t protocol.Turn) bool { return t.ID == *tr.TurnID }); i >= 0 {
			load := &protocol.ChatTurnsLoadedAction{Turns: older[i:]}
			if from := start + int64(i); from > 0 {
				load.TurnsNextCursor = protocol.Ptr(turnsCursor(from))
			}
			return load, nil
		}
	}
	return nil, check.Rejectf("turn %s is not in this chat", *tr.TurnID)
}

// loadOlderTurnsLocked commits a chat/turnsLoaded that truncationLoadLocked
// returned: every subscriber now holds the chat's widened window.
func (h *Host) loadOlderTurnsLocked(ch *channel, load *protocol.ChatTurnsLoadedAction) {
	h.commitLocked(ch, load, nil)
	for _, sub := range ch.subs {
		if sub.turnsFrom > ch.chat.base {
			sub.turnsFrom = ch.chat.base
		}
	}
}

// validateLocked returns a *check.Rejection saying why a client action must be
// rejected, a *storeMiss while it needs the store (a chat attachment's
// turns), or nil.
func (h *Host) validateLocked(rd *storeReads, c *conn, ch *channel, a protocol.StateAction) error {
	typ := a.Type()
	if _, unknown := a.(*protocol.Unknown); unknown {
		return check.Rejectf("unknown action type %q", typ)
	}
	if !protocol.ClientDispatchable(typ) {
		return check.Rejectf("%s may only be dispatched by the host", typ)
	}
	if scope := protocol.ActionScope(typ); scope != ch.kind {
		return check.Rejectf("%s is a %s action, not valid on %s", typ, scope, ch.uri)
	}
	switch ch.kind {
	case protocol.ChannelSession:
		return check.Reject(validateSessionAction(c.clientID, h.capabilitiesLocked(ch.session), ch.state.(*protocol.SessionState), a))
	case protocol.ChannelChat:
		sess := h.channels[ch.session.uri].state.(*protocol.SessionState)
		if err := check.Reject(validateChatAction(h.capabilitiesLocked(ch.session), sess, ch.state.(*protocol.ChatState), a)); err != nil {
			return err
		}
		switch a := a.(type) {
		case *protocol.ChatTurnStartedAction:
			return h.checkAttachmentsLocked(rd, &a.Message)
		case *protocol.ChatPendingMessageSetAction:
			return h.checkAttachmentsLocked(rd, &a.Message)
		}
	}
	if ch.owner != nil {
		return check.Reject(ch.owner.ValidateAction(clientLocked(c), ch.state, a))
	}
	return nil
}

// capabilitiesLocked returns the capabilities the root channel advertises
// for the session's agent (none when its provider is not configured).
func (h *Host) capabilitiesLocked(s *session) protocol.AgentCapabilities {
	root := h.channels[protocol.RootURI].state.(*protocol.RootState)
	for _, info := range root.Agents {
		if info.Provider == s.provider && info.Capabilities != nil {
			return *info.Capabilities
		}
	}
	return protocol.AgentCapabilities{}
}

// validateSessionAction applies the rules of the session channel page and
// of the session action schemas. clientID is the sender's.
func validateSessionAction(clientID string, caps protocol.AgentCapabilities, s *protocol.SessionState, a protocol.StateAction) string {
	switch a := a.(type) {
	case *protocol.SessionConfigChangedAction:
		return sessionconfig.CheckChange(s.Config, a)
	case *protocol.SessionDefaultChatChangedAction:
		if a.DefaultChat != nil && !slices.ContainsFunc(s.Chats, func(c protocol.ChatSummary) bool { return c.Resource == *a.DefaultChat }) {
			return fmt.Sprintf("default chat %s is not in the session's chat catalog", *a.DefaultChat)
		}
	case *protocol.SessionActiveClientSetAction:
		// A client joins with its own entry: clientId matches the one it
		// gave in initialize.
		if a.ActiveClient.ClientID != clientID {
			return fmt.Sprintf("activeClient.clientId %q is not this client's (%q)", a.ActiveClient.ClientID, clientID)
		}
	case *protocol.SessionActiveClientRemovedAction:
		if a.ClientID != clientID {
			return fmt.Sprintf("client %q may only remove its own active-client entry, not %q", clientID, a.ClientID)
		}
	case *protocol.SessionWorkingDirectorySetAction:
		if caps.MultipleWorkingDirectories == nil {
			return "the agent does not support changing working directories (no multipleWorkingDirectories capability)"
		}
		if a.Directory == "" {
			return "directory must be a URI, not empty"
		}
	case *protocol.SessionWorkingDirectoryRemovedAction:
		mwd := caps.MultipleWorkingDirectories
		if mwd == nil {
			return "the agent does not support changing working directories (no multipleWorkingDirectories capability)"
		}
		// MultipleWorkingDirectoriesCapability: a primary that is
		// immutable or only replaceable is never removed.
		protected := isSet(mwd.ImmutablePrimary) || isSet(mwd.PrimaryReplacement)
		if protected && len(s.WorkingDirectories) > 0 && s.WorkingDirectories[0] == a.Directory {
			return fmt.Sprintf("%s is the agent's primary working directory, which cannot be removed", a.Directory)
		}
	case *protocol.SessionWorkingDirectoryReplacedAction:
		mwd := caps.MultipleWorkingDirectories
		if mwd == nil {
			return "the agent does not support changing working directories (no multipleWorkingDirectories capability)"
		}
		if a.Replacement == "" {
			return "replacement must be a URI, not empty"
		}
		// Replacing index 0 needs primaryReplacement.
		if len(s.WorkingDirectories) > 0 && s.WorkingDirectories[0] == a.Directory && !isSet(mwd.PrimaryReplacement) {
			return fmt.Sprintf("%s is the agent's primary working directory, which it cannot replace (no primaryReplacement)", a.Directory)
		}
	}
	return ""
}

func isSet(b *bool) bool { return b != nil && *b }

// outsideSession returns the first directory that is not one of the
// session's working directories, or "".
func outsideSession(sess *protocol.SessionState, dirs []string) (string, bool) {
	for _, d := range dirs {
		if !slices.Contains(sess.WorkingDirectories, d) {
			return d, true
		}
	}
	return "", false
}

// validateChatAction applies the rules of the chat channel page and of the
// chat action schemas.
func validateChatAction(caps protocol.AgentCapabilities, sess *protocol.SessionState, c *protocol.ChatState, a protocol.StateAction) string {
	switch a := a.(type) {
	case *protocol.ChatWorkingDirectorySetAction:
		if caps.MultipleWorkingDirectories == nil {
			return "the agent does not support changing working directories (no multipleWorkingDirectories capability)"
		}
		if d, out := outsideSession(sess, []string{a.Directory}); out {
			return fmt.Sprintf("%q is not one of the session's working directories", d)
		}
	case *protocol.ChatWorkingDirectoryRemovedAction:
		if caps.MultipleWorkingDirectories == nil {
			return "the agent does not support changing working directories (no multipleWorkingDirectories capability)"
		}
	case *protocol.ChatTurnStartedAction:
		if reason := clientMessage(&a.Message); reason != "" {
			return reason
		}
		if sess.Lifecycle == protocol.SessionLifecycleFailed {
			return "the session failed to start; create a new one"
		}
		if c.ActiveTurn != nil {
			return fmt.Sprintf("turn %s is already running; queue the message or cancel the turn", c.ActiveTurn.ID)
		}
		if a.TurnID == "" {
			return "turnId is required"
		}
		if slices.ContainsFunc(c.Turns, func(t protocol.Turn) bool { return t.ID == a.TurnID }) {
			return fmt.Sprintf("turn %s already exists", a.TurnID)
		}
	case *protocol.ChatPendingMessageSetAction:
		if reason := clientMessage(&a.Message); reason != "" {
			return reason
		}
	case *protocol.ChatDraftChangedAction:
		// "A client is only allowed to draft MessageKind.User messages."
		if a.Draft != nil {
			if reason := clientMessage(a.Draft); reason != "" {
				return reason
			}
		}
	case *protocol.ChatTurnResumeAction:
		// ChatTurnResumeAction: the latest turn, in state error, its final
		// part a resumable error.
		if c.ActiveTurn != nil {
			return fmt.Sprintf("turn %s is running", c.ActiveTurn.ID)
		}
		n := len(c.Turns)
		if n == 0 || c.Turns[n-1].ID != a.TurnID {
			return fmt.Sprintf("turn %s is not the latest turn", a.TurnID)
		}
		last := c.Turns[n-1]
		if last.State != protocol.TurnStateError {
			return fmt.Sprintf("turn %s did not stop at an error", a.TurnID)
		}
		if e, ok := lastPart(last.ResponseParts).(*protocol.ErrorResponsePart); !ok || e.Resumable == nil || !*e.Resumable {
			return fmt.Sprintf("turn %s stopped at an error that cannot be resumed", a.TurnID)
		}
	case *protocol.ChatTurnCancelledAction:
		if c.ActiveTurn == nil {
			return "no turn is running"
		}
		if a.TurnID != c.ActiveTurn.ID {
			return fmt.Sprintf("turn %s is not the running turn", a.TurnID)
		}
	case *protocol.ChatToolCallConfirmedAction:
		tc := findToolCall(c, a.TurnID, a.ToolCallID)
		if _, ok := tc.(*protocol.ToolCallPendingConfirmationState); !ok {
			return fmt.Sprintf("tool call %s is not waiting for confirmation", a.ToolCallID)
		}
	case *protocol.ChatToolCallResultConfirmedAction:
		tc := findToolCall(c, a.TurnID, a.ToolCallID)
		if _, ok := tc.(*protocol.ToolCallPendingResultConfirmationState); !ok {
			return fmt.Sprintf("tool call %s is not waiting for result confirmation", a.ToolCallID)
		}
	case *protocol.ChatInputAnswerChangedAction:
		req := findInputRequest(c, a.RequestID)
		if req == nil {
			return fmt.Sprintf("no open input request %s", a.RequestID)
		}
		if reason := validateAnswer(a.Answer); reason != "" {
			return reason
		}
	case *protocol.ChatInputCompletedAction:
		req := findInputRequest(c, a.RequestID)
		if req == nil {
			return fmt.Sprintf("no open input request %s", a.RequestID)
		}
		if a.Response == protocol.ChatInputResponseKindAccept {
			if q := missingRequiredAnswer(req, a.Answers); q != "" {
				return fmt.Sprintf("question %s needs a submitted answer", q)
			}
		}
	case *protocol.ChatPendingMessageRemovedAction:
		if !hasPendingMessage(c, a.Kind, a.ID) {
			return fmt.Sprintf("no %s message %s", a.Kind, a.ID)
		}
	}
	return ""
}

// lastPart returns the last of parts, or nil.
func lastPart(parts []protocol.ResponsePart) protocol.ResponsePart {
	if len(parts) == 0 {
		return nil
	}
	return parts[len(parts)-1]
}

// clientMessage checks a message a client sends: ChatTurnStartedAction,
// ChatPendingMessageSetAction and ChatDraftChangedAction allow clients only
// user messages.
func clientMessage(m *protocol.Message) string {
	if m.Origin.Kind != protocol.MessageKindUser {
		return fmt.Sprintf("a client may only send user messages, not origin.kind %q", m.Origin.Kind)
	}
	return ""
}

// findToolCall returns the state of a tool call of the active turn.
func findToolCall(c *protocol.ChatState, turnID, toolCallID string) protocol.ToolCallState {
	if c.ActiveTurn == nil || c.ActiveTurn.ID != turnID {
		return nil
	}
	for _, part := range c.ActiveTurn.ResponseParts {
		if p, ok := part.(*protocol.ToolCallResponsePart); ok && toolCallIDOf(p.ToolCall) == toolCallID {
			return p.ToolCall
		}
	}
	return nil
}

func toolCallIDOf(tc protocol.ToolCallState) string {
	switch tc := tc.(type) {
	case *protocol.ToolCallStreamingState:
		return tc.ToolCallID
	case *protocol.ToolCallPendingConfirmationState:
		return tc.ToolCallID
	case *protocol.ToolCallRunningState:
		return tc.ToolCallID
	case *protocol.ToolCallAuthRequiredState:
		return tc.ToolCallID
	case *protocol.ToolCallPendingResultConfirmationState:
		return tc.ToolCallID
	case *protocol.ToolCallCompletedState:
		return tc.ToolCallID
	case *protocol.ToolCallCancelledState:
		return tc.ToolCallID
	}
	return ""
}

// findInputRequest returns the open input request with the id.
func findInputRequest(c *protocol.ChatState, id string) *protocol.ChatInputRequest {
	if c.ActiveTurn == nil {
		return nil
	}
	for _, part := range c.ActiveTurn.ResponseParts {
		if p, ok := part.(*protocol.InputRequestResponsePart); ok && p.Request.ID == id && p.Response == nil {
			return &p.Request
		}
	}
	return nil
}

// validateAnswer checks that an answer that needs a value carries one of
// the matching kind.
func validateAnswer(ans protocol.ChatInputAnswer) string {
	a, ok := ans.(*protocol.ChatInputAnswered)
	if !ok {
		return ""
	}
	if a.Value == nil {
		return fmt.Sprintf("an answer in state %q needs a value", a.AnswerState)
	}
	if _, unknown := a.Value.(*protocol.Unknown); unknown {
		return fmt.Sprintf("unknown answer value kind %q", a.Value.Kind())
	}
	return ""
}

// missingRequiredAnswer returns the first required question that has no
// answer with a value, looking at the completing action's answers first and
// then at the drafts already on the request.
func missingRequiredAnswer(req *protocol.ChatInputRequest, answers map[string]protocol.ChatInputAnswer) string {
	for _, q := range req.Questions {
		id, required := questionRequirement(q)
		if !required {
			continue
		}
		ans, ok := answers[id]
		if !ok {
			ans = req.Answers[id]
		}
		if a, ok := ans.(*protocol.ChatInputAnswered); !ok || a.Value == nil {
			return id
		}
	}
	return ""
}

// questionRequirement returns a question's id and whether it must be
// answered.
func questionRequirement(q protocol.ChatInputQuestion) (string, bool) {
	switch q := q.(type) {
	case *protocol.ChatInputTextQuestion:
		return q.ID, q.Required != nil && *q.Required
	case *protocol.ChatInputNumberQuestion:
		return q.ID, q.Required != nil && *q.Required
	case *protocol.ChatInputBooleanQuestion:
		return q.ID, q.Required != nil && *q.Required
	case *protocol.ChatInputSingleSelectQuestion:
		return q.ID, q.Required != nil && *q.Required
	case *protocol.ChatInputMultiSelectQuestion:
		return q.ID, q.Required != nil && *q.Required
	}
	return "", false
}

func hasPendingMessage(c *protocol.ChatState, kind protocol.PendingMessageKind, id string) bool {
	switch kind {
	case protocol.PendingMessageKindSteering:
		return c.SteeringMessage != nil && c.SteeringMessage.ID == id
	case protocol.PendingMessageKindQueued:
		return slices.ContainsFunc(c.QueuedMessages, func(m protocol.PendingMessage) bool { return m.ID == id })
	}
	return false
}
