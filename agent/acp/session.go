package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// session is the bridge for one AHP session: one agent process (restarted
// after a crash) and one ACP session per AHP chat.
//
// Concurrency: mu guards everything below it. It is taken by the host's
// event goroutine (Handle), by the SDK's goroutines (updates, permission
// and file requests), by the goroutine running each turn's prompt and by
// the process watcher. Nothing blocks while holding it: host.Dispatch only
// queues, and every call to the agent is made with mu released. Lock
// order: session.mu, then the host's own lock (inside Dispatch and
// ChatState).
type session struct {
	b           *Backend
	host        agent.Host
	log         *slog.Logger
	uri         string
	defaultChat string
	dir         string // the working directory: the agent's cwd and the root of its file access
	realDir     string // dir with symbolic links resolved

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines that must end before Close returns

	terms terminals // the agent's terminals (terminal.go)

	// cfgMu serializes applying configuration to the agent
	// (applyConfig); it is taken before mu, never while holding it.
	cfgMu sync.Mutex

	mu       sync.Mutex
	opened   bool // Open has returned: session-level actions may be dispatched
	closed   bool
	proc     *process      // the running agent; nil when there is none
	gen      int           // processes started so far
	starting chan struct{} // closed when the start in progress ends; nil when none is
	crashes  []time.Time   // when the agent crashed, for the restart limit
	chats    map[string]*chat
	byACP    map[acpKey]*chat
	title    *string // session title the agent announced, not dispatched yet
	modes    []acpsdk.SessionMode
	commands []acpsdk.AvailableCommand
	custom   bool // modes or commands changed since last dispatched
	warned   map[string]bool
	// early holds session-level updates for ACP sessions not registered
	// yet: an agent may send them before it answers session/new.
	early map[acpKey][]*acpsdk.SessionNotification
	// resume maps chat URIs to the ACP sessions they had before a host
	// restart (agent.OpenRequest.Resume).
	resume map[string]string
	// config holds the session's configuration values as AHP has them
	// (nil when it has no configuration); cfgReport the agent's changes
	// not dispatched yet.
	config    map[string]jsontext.Value
	cfgReport map[string]jsontext.Value
	cfgQueued bool // a run applying config is queued and has not started

	// MCP servers (mcp.go) and the clients' tools (clienttools.go).
	mcpChoice     map[string]bool                               // clients' choice of configured server on or off, by name
	mcpEnablement map[string][]protocol.CustomizationEnablement // the decisions behind it, as clients sent them
	mcpStopped    map[string]bool                               // servers a client stopped (session/mcpServerStopRequested)
	mcpLive       map[string]bool                               // servers the default chat's ACP session was opened with
	mcpCaps       acpsdk.McpCapabilities                        // of the agent that ran last
	clients       []protocol.SessionActiveClient                // active clients, as the session was told of them
	clientCalls   map[clientCallKey]*clientCall                 // calls of clients' tools waiting for a result
}

// maxEarly bounds the updates kept for a session not registered yet.
const maxEarly = 32

// acpKey names an ACP session of one agent process: ids are only unique
// within a process.
type acpKey struct {
	gen int
	id  acpsdk.SessionId
}

// chat is the bridge's view of one AHP chat.
type chat struct {
	uri     string
	acpID   acpsdk.SessionId // its ACP session on process gen; "" before the first
	gen     int
	loading bool  // session/load in progress: the replayed history is skipped
	last    *turn // the turn started last
	running *turn // the turn whose prompt is with the agent, until it answers
	mode    string
	model   string
	models  []acpsdk.ModelInfo
	modes   []acpsdk.SessionMode
	options []acpsdk.SessionConfigOption
	config  acpConfig  // its ACP session's configuration (sessionconfig.go)
	tools   *chatTools // the clients' tools server of the chat; nil until its first ACP session
	mcpSig  string     // the MCP servers its ACP session was opened with (mcpServersLocked)
}

func newSession(b *Backend, req agent.OpenRequest, host agent.Host, dir string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	s := &session{
		b:           b,
		host:        host,
		log:         b.log.With("session", req.Session),
		uri:         req.Session,
		defaultChat: req.Chat,
		dir:         dir,
		realDir:     real,
		ctx:         ctx,
		cancel:      cancel,
		chats:       map[string]*chat{},
		byACP:       map[acpKey]*chat{},
		warned:      map[string]bool{},
		early:       map[acpKey][]*acpsdk.SessionNotification{},
	}
	s.resume = req.Resume
	s.restoreMCPChoice(req.Resume[mcpMemoKey])
	s.custom = len(b.cfg.MCPServers) > 0
	if req.Params != nil && req.Params.ActiveClient != nil {
		s.clients = []protocol.SessionActiveClient{*req.Params.ActiveClient}
	}
	s.config = maps.Clone(req.Config)
	s.chats[req.Chat] = &chat{uri: req.Chat, acpID: acpsdk.SessionId(req.Resume[req.Chat])}
	return s
}

// open starts the agent and the ACP session of the default chat.
func (s *session) open(ctx context.Context) error {
	p, err := s.ensureProcess(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := s.chats[s.defaultChat]
	s.mu.Unlock()
	if _, err := s.ensureACPSession(ctx, c, p); err != nil {
		return err
	}
	// Session-level state the agent announced while opening (modes,
	// commands, a title) goes out once Open has returned.
	s.wg.Go(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.opened = true
		s.flushSessionLocked()
	})
	return nil
}

// Handle reacts to the client actions the host accepted.
func (s *session) Handle(ev agent.Event) {
	switch a := ev.Action.(type) {
	case *protocol.ChatTurnStartedAction:
		tc := turnContext{steering: ev.Steering, transcripts: ev.Transcripts}
		if ev.Origin != nil {
			tc.client = ev.Origin.ClientID
		}
		s.startTurn(ev.Channel, a, tc)
	case *protocol.ChatToolCallCompleteAction:
		s.clientToolDone(ev.Channel, a)
	case *protocol.SessionActiveClientSetAction, *protocol.SessionActiveClientRemovedAction:
		s.clientsChanged(a)
	case *protocol.SessionCustomizationToggledAction:
		s.mcpToggled(a)
	case *protocol.SessionMCPServerStopRequestedAction:
		s.mcpStartStop(a.ID, true)
	case *protocol.SessionMCPServerStartRequestedAction:
		s.mcpStartStop(a.ID, false)
	case *protocol.ChatTurnCancelledAction:
		s.cancelTurn(ev.Channel, a.TurnID)
	case *protocol.ChatTruncatedAction:
		// Truncating drops the active turn, if any.
		s.cancelTurn(ev.Channel, "")
	case *protocol.ChatToolCallConfirmedAction:
		s.confirmed(ev.Channel, a)
	case *protocol.SessionConfigChangedAction:
		s.configChanged(a)
	case *protocol.SessionChatAddedAction:
		s.adopt(a.Summary.Resource, ev.Resume)
	case *protocol.SessionChatRemovedAction:
		s.release(a.Chat)
	}
}

// adopt takes up a chat moved in from another session: its next turn
// reloads the ACP session the chat had there (session/load, when the agent
// can), as a chat does after a host restart.
func (s *session) adopt(uri string, resume map[string]string) {
	id := resume[uri]
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chats[uri] == nil {
		s.chats[uri] = &chat{uri: uri, acpID: acpsdk.SessionId(id)}
	}
}

// release forgets a chat that moved to another session. The host moves
// no chat while a turn runs in it.
func (s *session) release(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[uri]
	if c == nil || c.running != nil || uri == s.defaultChat {
		return
	}
	delete(s.chats, uri)
	if s.byACP[acpKey{c.gen, c.acpID}] == c {
		delete(s.byACP, acpKey{c.gen, c.acpID})
	}
	if ct := c.tools; ct != nil {
		// Closed without s.mu: its calls in flight take it.
		c.tools = nil
		s.wg.Go(ct.close)
	}
	if !s.closed {
		// The terminals its ACP session created leave with it (the
		// workspace disposes a removed chat's terminals as well).
		s.wg.Go(func() { s.releaseTerminals(func(t agentTerminal) bool { return t.chat == uri }) })
	}
}

// Close stops the agent process group and waits for the session's
// goroutines.
func (s *session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	p := s.proc
	var tools []*chatTools
	for _, c := range s.chats {
		for _, t := range []*turn{c.last, c.running} {
			if t != nil {
				t.end(s)
			}
		}
		if c.tools != nil {
			tools = append(tools, c.tools)
			c.tools = nil
		}
	}
	s.mu.Unlock()
	s.cancel()
	// After the cancel, which ends the calls in flight.
	for _, ct := range tools {
		ct.close()
	}
	if p != nil {
		p.markStopping("the session was closed")
		p.stop()
	}
	s.wg.Wait()
	s.releaseTerminals(func(agentTerminal) bool { return true })
	s.b.forget(s)
	return nil
}

// chatLocked returns the bridge's record of a chat, making one for a chat
// it has not seen yet.
func (s *session) chatLocked(uri string) *chat {
	c := s.chats[uri]
	if c == nil {
		// A chat of a session reopened after a host restart starts from the
		// ACP session it had, which ensureACPSession reloads when it can.
		c = &chat{uri: uri, acpID: acpsdk.SessionId(s.resume[uri])}
		s.chats[uri] = c
	}
	return c
}

// ensureProcess returns the running agent, starting it when there is none.
// A start after a crash counts against the restart limit.
func (s *session) ensureProcess(ctx context.Context) (*process, error) {
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, errors.New("the session is closed")
		}
		if p := s.proc; p != nil {
			select {
			case <-p.exited:
				// It has exited and the watcher has not said so yet.
				s.mu.Unlock()
				s.processExited(p)
				s.mu.Lock()
				continue
			default:
			}
			s.mu.Unlock()
			return p, nil
		}
		if s.starting == nil {
			break
		}
		ch := s.starting
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	restart := s.gen > 0
	if restart {
		if n, ok := s.restartAllowedLocked(); !ok {
			s.mu.Unlock()
			return nil, fmt.Errorf("the agent crashed %d times in the last %s and is not restarted again; dispose this session and create a new one", n, s.b.opts.RestartWindow)
		}
	}
	ch := make(chan struct{})
	s.starting = ch
	s.mu.Unlock()

	p, err := s.start(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting = nil
	close(ch)
	if err != nil {
		if restart {
			s.crashes = append(s.crashes, time.Now())
		}
		return nil, err
	}
	if s.closed {
		p.markStopping("the session was closed")
		go p.stop()
		return nil, errors.New("the session is closed")
	}
	s.gen++
	p.gen = s.gen
	s.proc = p
	s.b.processes.Add(1)
	go func() {
		<-p.exited
		s.b.processes.Add(-1)
		s.processExited(p)
	}()
	if restart {
		s.b.restarts.Add(1)
		s.log.Info("agent restarted", "restarts", s.gen-1)
	}
	return p, nil
}

// restartAllowedLocked applies the restart limit: it returns the crashes
// within the restart window and whether the agent may start again.
func (s *session) restartAllowedLocked() (int, bool) {
	o := s.b.opts
	since := time.Now().Add(-o.RestartWindow)
	n := 0
	for _, t := range s.crashes {
		if t.After(since) {
			n++
		}
	}
	return n, o.MaxRestarts >= 0 && n <= o.MaxRestarts
}

// start starts a process and runs the ACP handshake.
func (s *session) start(ctx context.Context) (*process, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.StartTimeout)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	cfg, env := s.b.launch(s.b.opts.Credentials.get(s.b.cfg.Name))
	p, err := startProcess(cfg, s.dir, env,
		func(p *process) acpsdk.Client { return &client{s: s, p: p} }, s.log, &s.b.opts)
	if err != nil {
		return nil, err
	}
	p.terminals = s.terminalService() != nil
	if err := p.handshake(ctx, cfg, s.b.clientInfo()); err != nil {
		p.markStopping("the handshake failed")
		p.stop()
		return nil, err
	}
	return p, nil
}

// processExited handles the end of an agent process. When the host did
// not stop it, it crashed: every turn it was running fails with a message
// that says so, and the next turn starts a new process.
func (s *session) processExited(p *process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.exitHandled {
		return
	}
	p.exitHandled = true
	if s.proc == p {
		s.proc = nil
	}
	if s.closed {
		return
	}
	// The terminals the process created go with it: their ids mean
	// nothing to the next one.
	gen := p.gen
	s.wg.Go(func() { s.releaseTerminals(func(t agentTerminal) bool { return t.gen == gen }) })
	why := p.stopReason()
	var msg string
	if why == "" {
		s.crashes = append(s.crashes, time.Now())
		msg = p.exitText()
		s.log.Warn("agent crashed", "exit", fmt.Sprint(p.err))
		msg = "The agent stopped during this turn: " + msg
		if n, ok := s.restartAllowedLocked(); ok {
			msg += "\nIt will be restarted for the next message."
		} else {
			msg += fmt.Sprintf("\nIt crashed %d times in the last %s and is not restarted again: dispose this session and create a new one.", n, s.b.opts.RestartWindow)
		}
	} else {
		msg = "The agent was restarted: " + why + "."
	}
	for _, c := range s.chats {
		t := c.running
		if t == nil || t.ended {
			continue
		}
		s.emit(t, &protocol.ChatErrorAction{TurnID: t.id, Duration: t.duration(),
			Part: &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "agentCrashed", Message: msg}}})
		t.end(s)
	}
}

// ensureACPSession returns the ACP session of a chat on process p: the
// one it has, or the previous process's one reloaded (when the agent can
// load sessions), or a new one.
//
// The ACP session gets the MCP servers that are on (mcp.go) and the
// clients' tools server (clienttools.go). When the servers that are on
// changed since the chat's ACP session was opened, it is loaded again
// with the new set, when the agent can load sessions.
func (s *session) ensureACPSession(ctx context.Context, c *chat, p *process) (acpsdk.SessionId, error) {
	s.chatToolsFor(c, p)
	s.mu.Lock()
	servers, sig := s.mcpServersLocked(c, p)
	if c.acpID != "" && c.gen == p.gen && (c.mcpSig == sig || !p.init.AgentCapabilities.LoadSession) {
		id := c.acpID
		s.mu.Unlock()
		return id, nil
	}
	old := c.acpID
	canLoad := old != "" && p.init.AgentCapabilities.LoadSession
	if canLoad {
		c.loading = true
		c.gen = p.gen
		s.byACP[acpKey{p.gen, old}] = c
	}
	s.mu.Unlock()
	if canLoad {
		res, err := p.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: old, Cwd: s.dir, McpServers: servers})
		s.mu.Lock()
		c.loading = false
		if err == nil {
			s.sessionOpenedLocked(c, p, old, res.Models, res.Modes, res.ConfigOptions)
			s.mcpOpenedLocked(c, sig)
			s.mu.Unlock()
			s.host.Remember(c.uri, string(old))
			s.applyConfig(c, p)
			return old, nil
		}
		delete(s.byACP, acpKey{p.gen, old})
		s.mu.Unlock()
		s.log.Info("session/load failed; starting a new ACP session", "err", errorText(err))
	}
	mark := p.stderrMark()
	res, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: s.dir, McpServers: servers})
	if err != nil {
		return "", p.explain(ctx, "session/new", err, mark)
	}
	s.mu.Lock()
	s.sessionOpenedLocked(c, p, res.SessionId, res.Models, res.Modes, res.ConfigOptions)
	s.mcpOpenedLocked(c, sig)
	s.mu.Unlock()
	// Kept with the session so that a host restart can reload it.
	s.host.Remember(c.uri, string(res.SessionId))
	s.applyConfig(c, p)
	return res.SessionId, nil
}

// sessionOpenedLocked records a chat's ACP session and what the agent said
// about it.
func (s *session) sessionOpenedLocked(c *chat, p *process, id acpsdk.SessionId, models *acpsdk.SessionModelState, modes *acpsdk.SessionModeState, options []acpsdk.SessionConfigOption) {
	c.acpID, c.gen = id, p.gen
	key := acpKey{p.gen, id}
	s.byACP[key] = c
	early := s.early[key]
	delete(s.early, key)
	if models != nil {
		c.model, c.models = string(models.CurrentModelId), models.AvailableModels
	}
	c.modes, c.options = nil, options
	if modes != nil {
		c.modes = modes.AvailableModes
	}
	c.config = buildConfig(modes, models, options)
	if modes != nil {
		c.mode = string(modes.CurrentModeId)
		if c.uri == s.defaultChat {
			s.modes = modes.AvailableModes
			s.custom = true
			s.flushSessionLocked()
		}
	}
	for _, n := range early {
		s.updateLocked(p, n)
	}
}

// flushSessionLocked dispatches the session-level state that changed,
// once Open has returned.
func (s *session) flushSessionLocked() {
	if !s.opened || s.closed {
		return
	}
	if s.title != nil {
		s.dispatchSession(&protocol.SessionTitleChangedAction{Title: *s.title})
		s.title = nil
	}
	if len(s.cfgReport) > 0 {
		s.dispatchSession(&protocol.SessionConfigChangedAction{Config: s.cfgReport})
		s.cfgReport = nil
	}
	if s.custom {
		s.custom = false
		list := []protocol.Customization{}
		if len(s.modes) > 0 {
			list = append(list, modesCustomization(s.modes))
		}
		if len(s.commands) > 0 {
			list = append(list, commandsCustomization(s.commands))
		}
		list = append(list, s.mcpCustomizationsLocked()...)
		s.dispatchSession(&protocol.SessionCustomizationsChangedAction{Customizations: list})
	}
}

func (s *session) dispatchSession(a protocol.StateAction) {
	if err := s.host.Dispatch(s.uri, a); err != nil {
		s.log.Debug("dispatch failed", "type", a.Type(), "err", err)
	}
}

// warnOnceLocked logs a message the first time key is seen.
func (s *session) warnOnceLocked(key, msg string, args ...any) {
	if s.warned[key] {
		return
	}
	s.warned[key] = true
	s.log.Warn(msg, args...)
}
