package acp

import (
	"context"
	"maps"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// client is the ACP client the host plays for one agent process.
type client struct {
	s *session
	p *process
}

// SessionUpdate maps one session/update to AHP actions. It runs on the
// SDK's notification goroutine and never waits on the network: Dispatch
// only queues.
func (c *client) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.s.update(c.p, &n)
	c.p.flow.done()
	return nil
}

// ACP update kinds, as the discriminator spells them.
const (
	kindUserChunk    = "user_message_chunk"
	kindMessageChunk = "agent_message_chunk"
	kindThoughtChunk = "agent_thought_chunk"
	kindToolCall     = "tool_call"
	kindToolUpdate   = "tool_call_update"
	kindPlan         = "plan"
	kindCommands     = "available_commands_update"
	kindMode         = "current_mode_update"
	kindConfig       = "config_option_update"
	kindSessionInfo  = "session_info_update"
	kindUsage        = "usage_update"
)

// updateKind returns the discriminator of an update and whether it names
// the variant the SDK decoded. The SDK falls back to matching fields when
// it does not know a kind, so an update kind newer than the SDK comes out
// as some other variant (a user message chunk when it has content, a
// session info update otherwise); the discriminator it kept tells.
func updateKind(u *acpsdk.SessionUpdate) (string, bool) {
	check := func(got, want string) (string, bool) { return got, got == want }
	switch {
	case u.UserMessageChunk != nil:
		return check(u.UserMessageChunk.SessionUpdate, kindUserChunk)
	case u.AgentMessageChunk != nil:
		return check(u.AgentMessageChunk.SessionUpdate, kindMessageChunk)
	case u.AgentThoughtChunk != nil:
		return check(u.AgentThoughtChunk.SessionUpdate, kindThoughtChunk)
	case u.ToolCall != nil:
		return check(u.ToolCall.SessionUpdate, kindToolCall)
	case u.ToolCallUpdate != nil:
		return check(u.ToolCallUpdate.SessionUpdate, kindToolUpdate)
	case u.Plan != nil:
		return check(u.Plan.SessionUpdate, kindPlan)
	case u.AvailableCommandsUpdate != nil:
		return check(u.AvailableCommandsUpdate.SessionUpdate, kindCommands)
	case u.CurrentModeUpdate != nil:
		return check(u.CurrentModeUpdate.SessionUpdate, kindMode)
	case u.ConfigOptionUpdate != nil:
		return check(u.ConfigOptionUpdate.SessionUpdate, kindConfig)
	case u.SessionInfoUpdate != nil:
		return check(u.SessionInfoUpdate.SessionUpdate, kindSessionInfo)
	case u.UsageUpdate != nil:
		return check(u.UsageUpdate.SessionUpdate, kindUsage)
	}
	return "", false
}

// update applies one session/update from process p.
func (s *session) update(p *process, n *acpsdk.SessionNotification) {
	u := &n.Update
	kind, ok := updateKind(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.warnOnceLocked("update:"+kind, "skipping session/update of a kind this host does not know", "kind", kind)
		return
	}
	s.updateLocked(p, n)
}

// updateLocked applies an update of a known kind.
func (s *session) updateLocked(p *process, n *acpsdk.SessionNotification) {
	u := &n.Update
	kind, _ := updateKind(u)
	if s.closed {
		return
	}
	key := acpKey{p.gen, n.SessionId}
	c := s.byACP[key]
	if c == nil {
		switch kind {
		case kindCommands, kindMode, kindConfig, kindSessionInfo:
			if len(s.early[key]) < maxEarly {
				s.early[key] = append(s.early[key], n)
			}
		}
		return
	}
	if c.loading {
		return
	}

	// Session-level updates apply whether or not a turn runs.
	switch kind {
	case kindCommands:
		if c.uri == s.defaultChat {
			s.commands = u.AvailableCommandsUpdate.AvailableCommands
			s.custom = true
			s.flushSessionLocked()
		}
		return
	case kindMode:
		s.modeChangedLocked(c, string(u.CurrentModeUpdate.CurrentModeId))
		return
	case kindConfig:
		s.optionsChangedLocked(c, u.ConfigOptionUpdate.ConfigOptions)
		return
	case kindSessionInfo:
		if t := u.SessionInfoUpdate.Title; t != nil && *t != "" && c.uri == s.defaultChat {
			s.title = t
			s.flushSessionLocked()
		}
		return
	case kindPlan:
		s.warnOnceLocked("dropped:"+kind, "dropping ACP updates that AHP has no counterpart for", "kind", kind)
		return
	case kindUserChunk:
		// The AHP turn holds the user's message already; agents echo it
		// when replaying a loaded session.
		return
	}

	t := c.running
	if t == nil || t.ended {
		// Late updates of a cancelled turn, or chatter between turns.
		return
	}
	s.outputLocked(t)
	switch kind {
	case kindMessageChunk:
		s.chunk(t, u.AgentMessageChunk.Content, false)
	case kindThoughtChunk:
		s.chunk(t, u.AgentThoughtChunk.Content, true)
	case kindToolCall:
		s.toolCall(t, string(u.ToolCall.ToolCallId), fieldsOfToolCall(u.ToolCall), false)
	case kindToolUpdate:
		s.toolCall(t, string(u.ToolCallUpdate.ToolCallId), fieldsOfToolUpdate(u.ToolCallUpdate), false)
	case kindUsage:
		uu := u.UsageUpdate
		meta := t.usageMeta()
		meta["contextUsed"] = jsonValue(uu.Used)
		meta["contextSize"] = jsonValue(uu.Size)
		if uu.Cost != nil {
			meta["cost"] = jsonValue(uu.Cost)
		}
		s.emitUsage(t)
	}
}

// chunk streams a message or thought chunk into the turn: text appends to
// the current markdown (or reasoning) part, starting a new one after any
// other kind of part; a link becomes a content reference part.
func (s *session) chunk(t *turn, b acpsdk.ContentBlock, thought bool) {
	text, ok := blockText(b)
	if !ok {
		if b.ResourceLink != nil && b.ResourceLink.Type == "resource_link" && !thought {
			l := b.ResourceLink
			part := &protocol.ResourceResponsePart{URI: l.Uri, ContentType: l.MimeType}
			if l.Size != nil {
				part.SizeHint = protocol.Ptr(int64(*l.Size))
			}
			if s.emit(t, &protocol.ChatResponsePartAction{TurnID: t.id, Part: part}) {
				t.textPart, t.thoughtPart = "", ""
			}
			return
		}
		s.warnOnceLocked("chunk:"+blockKind(b), "dropping message content AHP cannot show inline", "content", blockKind(b))
		return
	}
	if text == "" {
		return
	}
	if thought {
		if t.thoughtPart == "" {
			id := t.nextID("thought")
			if s.emit(t, &protocol.ChatResponsePartAction{TurnID: t.id, Part: &protocol.ReasoningResponsePart{ID: id, Content: protocol.TextOf(text)}}) {
				t.thoughtPart, t.textPart = id, ""
			}
			return
		}
		s.emit(t, &protocol.ChatReasoningAction{TurnID: t.id, PartID: t.thoughtPart, Content: text})
		return
	}
	if t.textPart == "" {
		id := t.nextID("text")
		if s.emit(t, &protocol.ChatResponsePartAction{TurnID: t.id, Part: &protocol.MarkdownResponsePart{ID: id, Content: protocol.TextOf(text)}}) {
			t.textPart, t.thoughtPart = id, ""
		}
		return
	}
	s.emit(t, &protocol.ChatDeltaAction{TurnID: t.id, PartID: t.textPart, Content: text})
}

// usageMeta returns the _meta of the turn's usage, made on first use.
func (t *turn) usageMeta() map[string]jsontext.Value {
	if t.usage.Meta == nil {
		t.usage.Meta = map[string]jsontext.Value{}
	}
	return t.usage.Meta
}

// emitUsage dispatches the turn's usage as it stands.
func (s *session) emitUsage(t *turn) {
	u := t.usage
	u.Meta = maps.Clone(u.Meta)
	if m := t.chat.model; m != "" && u.Model == nil {
		u.Model = protocol.Ptr(m)
	}
	s.emit(t, &protocol.ChatUsageAction{TurnID: t.id, Usage: u})
}

// metaOf returns a one-key _meta.
func metaOf(key string, v any) map[string]jsontext.Value {
	return map[string]jsontext.Value{key: jsonValue(v)}
}
