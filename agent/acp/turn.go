package acp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ahp-go/ahp/protocol"
)

// turn is one AHP turn and the ACP prompt that runs it.
//
// An AHP turn can end before its prompt does: a client cancels it (the
// reducer ends it at once), truncates the chat, or the host shuts down.
// From then on ended is true and nothing more is dispatched for it; the
// updates the agent still sends for the prompt are dropped. The chat's
// next prompt waits until this one has answered, so that no update of
// this prompt can land in the next turn.
type turn struct {
	id      string
	chat    *chat
	msg     protocol.Message
	context turnContext
	started time.Time
	done    chan struct{} // closed when the prompt has answered (or was never sent)

	// Guarded by session.mu.
	ended       bool
	sent        bool // the prompt request is going to the agent
	cancelling  bool // session/cancel sent; the chat shows it
	timer       *time.Timer
	quiet       *time.Timer // fires when the agent has been quiet for QuietAfter
	lastOutput  time.Time   // of the latest update, or when the prompt was sent
	quietShown  bool        // the chat's activity says the agent is quiet
	parts       int
	textPart    string // markdown part that message chunks append to; "" for a new one
	thoughtPart string
	tools       map[string]*tool
	perms       map[string]*permission // by tool call id
	usage       protocol.UsageInfo
}

func (t *turn) duration() float64 { return float64(time.Since(t.started).Milliseconds()) }

// nextID returns a new response part id. Its prefix keeps it apart from
// the agent's tool call ids.
func (t *turn) nextID(kind string) string {
	t.parts++
	return "acp-" + kind + "-" + strconv.Itoa(t.parts)
}

// end marks the turn over and cancels the permission requests it has
// open. Callers hold s.mu.
func (t *turn) end(s *session) {
	t.ended = true
	if t.quiet != nil {
		t.quiet.Stop()
	}
	if t.quietShown {
		t.quietShown = false
		if !s.closed {
			if err := s.host.Dispatch(t.chat.uri, &protocol.ChatActivityChangedAction{}); err != nil {
				s.log.Debug("dispatch failed", "err", err)
			}
		}
	}
	for id, p := range t.perms {
		p.answer(acpsdk.NewRequestPermissionOutcomeCancelled())
		delete(t.perms, id)
	}
	s.endClientCallsLocked(t)
}

// emit dispatches a chat action for the turn unless the turn has ended.
// Callers hold s.mu.
func (s *session) emit(t *turn, a protocol.StateAction) bool {
	if t.ended || s.closed {
		return false
	}
	if err := s.host.Dispatch(t.chat.uri, a); err != nil {
		// The chat or the session is gone, or the host is stopping.
		s.log.Debug("dispatch failed; the turn is over for the bridge", "type", a.Type(), "err", err)
		t.end(s)
		return false
	}
	return true
}

// startTurn runs a turn a client (or the host, from a queued message)
// started.
func (s *session) startTurn(chatURI string, a *protocol.ChatTurnStartedAction, tc turnContext) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	c := s.chatLocked(chatURI)
	t := &turn{id: a.TurnID, chat: c, msg: a.Message, context: tc, started: time.Now(), done: make(chan struct{}),
		tools: map[string]*tool{}, perms: map[string]*permission{}}
	var prev chan struct{}
	if c.last != nil {
		prev = c.last.done
	}
	c.last = t
	s.wg.Go(func() { s.runTurn(t, prev) })
}

// runTurn waits for the chat's previous prompt, makes sure the agent and
// the chat's ACP session are there, and runs the prompt.
func (s *session) runTurn(t *turn, prev chan struct{}) {
	defer close(t.done)
	if prev != nil {
		select {
		case <-prev:
		case <-s.ctx.Done():
			return
		}
	}
	c := t.chat
	s.mu.Lock()
	if t.ended || s.closed {
		s.mu.Unlock()
		return
	}
	c.running = t
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if c.running == t {
			c.running = nil
		}
		s.mu.Unlock()
	}()

	p, err := s.ensureProcess(s.ctx)
	if err != nil {
		s.failTurn(t, "agentUnavailable", "The agent could not be started: "+err.Error())
		return
	}
	id, err := s.ensureACPSession(s.ctx, c, p)
	if err != nil {
		s.failTurn(t, "agentUnavailable", "The agent could not open a session: "+err.Error())
		return
	}
	// Configuration changed before the turn started applies to it: this
	// waits for a change being applied and applies one not started yet.
	s.applyConfig(c, p)
	s.applySelection(c, p, id, t.msg)

	s.mu.Lock()
	if t.ended || s.closed {
		s.mu.Unlock()
		return
	}
	t.sent = true
	s.armQuietLocked(t)
	blocks := promptBlocks(p.init.AgentCapabilities.PromptCapabilities, t.msg, t.context)
	s.mu.Unlock()

	mark := p.stderrMark()
	res, err := p.conn.Prompt(s.ctx, acpsdk.PromptRequest{SessionId: id, Prompt: blocks})
	detail := ""
	// A prompt failed by the agent is explained with what it wrote on
	// stderr; one that failed because the session is closing is not
	// reported to anyone, so its close does not wait for stderr.
	if err != nil && s.ctx.Err() == nil {
		detail = p.stderrSince(mark)
	}
	if err != nil {
		select {
		case <-p.conn.Done():
			// The agent went away: let the crash handling speak for it.
			select {
			case <-p.exited:
				s.processExited(p)
			case <-time.After(s.b.opts.KillTimeout + 2*s.b.opts.ExitGrace):
			}
		default:
		}
	}
	s.finishTurn(t, res, err, detail)
}

// armQuietLocked starts watching the turn for silence. Callers hold s.mu.
func (s *session) armQuietLocked(t *turn) {
	d := s.b.opts.QuietAfter
	if d <= 0 {
		return
	}
	t.lastOutput = time.Now()
	t.quiet = time.AfterFunc(d, func() { s.quietTurn(t) })
}

// quietTurn says in the chat's activity that the agent has sent nothing
// for a while, and checks again after QuietAfter.
func (s *session) quietTurn(t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ended || s.closed || t.cancelling {
		return
	}
	d := s.b.opts.QuietAfter
	if len(t.perms) > 0 || s.clientCallsOfLocked(t) {
		// Waiting for a client, not for the agent.
		t.lastOutput = time.Now()
		t.quiet.Reset(d)
		return
	}
	since := time.Since(t.lastOutput)
	if since < d {
		t.quiet.Reset(d - since)
		return
	}
	msg := "No output from the agent for " + since.Round(time.Second).String()
	if err := s.host.Dispatch(t.chat.uri, &protocol.ChatActivityChangedAction{Activity: &msg}); err != nil {
		s.log.Debug("dispatch failed", "err", err)
		return
	}
	t.quietShown = true
	t.quiet.Reset(d)
}

// outputLocked notes an update of the running turn: the silence, if
// shown, is over. Callers hold s.mu.
func (s *session) outputLocked(t *turn) {
	t.lastOutput = time.Now()
	if t.quietShown {
		t.quietShown = false
		if err := s.host.Dispatch(t.chat.uri, &protocol.ChatActivityChangedAction{}); err != nil {
			s.log.Debug("dispatch failed", "err", err)
		}
	}
}

// failTurn ends a turn with an error before its prompt was sent.
func (s *session) failTurn(t *turn, kind, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(t, &protocol.ChatErrorAction{TurnID: t.id, Duration: t.duration(),
		Part: &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: kind, Message: msg}}})
	t.end(s)
}

// finishTurn ends the AHP turn as the agent's answer says, unless it has
// ended already. detail follows the message of a failed prompt (the
// agent's stderr).
func (s *session) finishTurn(t *turn, res acpsdk.PromptResponse, err error, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.cancelling {
		t.cancelling = false
		if !s.closed {
			if err := s.host.Dispatch(t.chat.uri, &protocol.ChatActivityChangedAction{}); err != nil {
				s.log.Debug("dispatch failed", "err", err)
			}
		}
	}
	if t.ended {
		t.end(s)
		return
	}
	if err != nil {
		msg := "The agent failed the turn: " + errorText(err) + detail
		if errors.Is(err, context.Canceled) {
			msg = "The turn was interrupted."
		}
		s.emit(t, &protocol.ChatErrorAction{TurnID: t.id, Duration: t.duration(),
			Part: &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "agentError", Message: msg}}})
		t.end(s)
		return
	}
	if res.Usage != nil {
		u := res.Usage
		t.usage.InputTokens = protocol.Ptr(int64(u.InputTokens))
		t.usage.OutputTokens = protocol.Ptr(int64(u.OutputTokens))
		if u.CachedReadTokens != nil {
			t.usage.CacheReadTokens = protocol.Ptr(int64(*u.CachedReadTokens))
		}
		meta := t.usageMeta()
		meta["totalTokens"] = jsonValue(u.TotalTokens)
		if u.ThoughtTokens != nil {
			meta["thoughtTokens"] = jsonValue(*u.ThoughtTokens)
		}
		if u.CachedWriteTokens != nil {
			meta["cacheWriteTokens"] = jsonValue(*u.CachedWriteTokens)
		}
		s.emitUsage(t)
	}
	switch res.StopReason {
	case acpsdk.StopReasonEndTurn, "":
		s.emit(t, &protocol.ChatTurnCompleteAction{TurnID: t.id, Duration: t.duration()})
	case acpsdk.StopReasonCancelled:
		s.emit(t, &protocol.ChatTurnCancelledAction{TurnID: t.id, Duration: t.duration()})
	case acpsdk.StopReasonMaxTokens:
		s.stopError(t, res.StopReason, "The agent stopped: the model reached its token limit.")
	case acpsdk.StopReasonMaxTurnRequests:
		s.stopError(t, res.StopReason, "The agent stopped: it reached its limit of model requests for one turn.")
	case acpsdk.StopReasonRefusal:
		s.stopError(t, res.StopReason, "The agent refused to continue.")
	default:
		s.emit(t, &protocol.ChatTurnCompleteAction{TurnID: t.id, Duration: t.duration(),
			Meta: metaOf("stopReason", string(res.StopReason))})
	}
	t.end(s)
}

func (s *session) stopError(t *turn, reason acpsdk.StopReason, msg string) {
	s.emit(t, &protocol.ChatErrorAction{TurnID: t.id, Duration: t.duration(),
		Part: &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: string(reason), Message: msg}}})
}

// cancelTurn handles a turn a client cancelled (or dropped by truncating;
// turnID "" then means whichever turn runs). The AHP turn is over already;
// the agent is told with session/cancel and the chat shows that it is
// stopping until the prompt answers. An agent that has not answered within
// the cancel timeout is restarted.
func (s *session) cancelTurn(chatURI, turnID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatURI]
	if c == nil || c.last == nil || c.last.ended || (turnID != "" && c.last.id != turnID) {
		return
	}
	t := c.last
	t.end(s)
	p := s.proc
	if !t.sent || c.running != t || p == nil || s.closed {
		return
	}
	select {
	case <-t.done:
		return
	default:
	}
	t.cancelling = true
	if err := s.host.Dispatch(c.uri, &protocol.ChatActivityChangedAction{Activity: protocol.Ptr("Stopping the agent…")}); err != nil {
		s.log.Debug("dispatch failed", "err", err)
	}
	id := c.acpID
	s.wg.Go(func() {
		if err := p.conn.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: id}); err != nil {
			s.log.Debug("session/cancel failed", "err", err)
		}
	})
	timeout := s.b.opts.CancelTimeout
	t.timer = time.AfterFunc(timeout, func() {
		select {
		case <-t.done:
			return
		default:
		}
		why := fmt.Sprintf("it did not end a cancelled turn within %s", timeout)
		s.log.Warn("restarting the agent: " + why)
		p.markStopping(why)
		p.stop()
	})
}

// applySelection switches the chat's ACP session to the mode and model
// the message asks for, when they differ from the current ones. Failures
// are logged: the prompt still runs.
func (s *session) applySelection(c *chat, p *process, id acpsdk.SessionId, m protocol.Message) {
	s.mu.Lock()
	var mode, model string
	if m.Agent != nil {
		if mid, ok := modeOfURI(m.Agent.URI); ok && mid != c.mode {
			mode = mid
		}
	}
	var modelOpt acpsdk.SessionConfigId // the config option that is the model, when the agent has no ACP models
	if m.Model != nil && m.Model.ID != "" {
		if mo := modelOption(c.options); len(c.models) == 0 && mo != nil {
			if string(mo.CurrentValue) != m.Model.ID {
				model, modelOpt = m.Model.ID, mo.Id
			}
		} else if m.Model.ID != c.model {
			model = m.Model.ID
		}
	}
	s.mu.Unlock()
	if mode != "" {
		if _, err := p.conn.SetSessionMode(s.ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: acpsdk.SessionModeId(mode)}); err != nil {
			s.log.Warn("session/set_mode failed", "mode", mode, "err", errorText(err))
		} else {
			s.mu.Lock()
			s.modeChangedLocked(c, mode)
			s.mu.Unlock()
		}
	}
	if model != "" && modelOpt != "" {
		res, err := p.conn.SetSessionConfigOption(s.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: modelOpt, Value: acpsdk.SessionConfigValueId(model)}})
		if err != nil {
			s.log.Warn("session/set_config_option failed", "option", modelOpt, "model", model, "err", errorText(err))
		} else if res.ConfigOptions != nil {
			s.mu.Lock()
			s.optionsChangedLocked(c, res.ConfigOptions)
			s.mu.Unlock()
		}
	} else if model != "" {
		if _, err := p.conn.UnstableSetSessionModel(s.ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: acpsdk.UnstableModelId(model)}); err != nil {
			s.log.Warn("session/set_model failed", "model", model, "err", errorText(err))
		} else {
			s.mu.Lock()
			s.modelChangedLocked(c, model)
			s.mu.Unlock()
		}
	}
}
