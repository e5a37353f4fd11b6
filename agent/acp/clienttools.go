package acp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-go/ahp/protocol"
)

// The clients' tools.
//
// The tools that a session's active clients publish (session/activeClientSet)
// reach the agent through an MCP server that ahpd serves for each chat: a
// streamable HTTP endpoint on 127.0.0.1 whose path holds a random secret,
// given to the chat's ACP session in mcpServers under the name
// ClientToolsServer. Only agents that advertise mcpCapabilities.http get
// it. The server lists the tools of the clients active now and follows
// their changes (notifications/tools/list_changed).
//
// A call of one of them becomes a tool call of the chat's running turn,
// contributed by the client that runs it (the client that started the
// turn when it offers the tool, else the first active client that does):
// chat/toolCallStart and chat/toolCallReady (running, no confirmation
// needed: the client runs its own tool and decides whether to ask). The
// client dispatches chat/toolCallComplete; its result is the answer to
// the agent. The call fails, with an error result the agent sees, when
// the client leaves the session (the host completes its calls), when it
// does not answer within Config.ClientToolTimeout, when the turn ends, and
// when no turn runs in the chat.

// ClientToolsServer is the name of the MCP server of the clients' tools in
// the agent's mcpServers. A configured MCP server may not take it.
const ClientToolsServer = "ahp-clients"

// DefaultClientToolTimeout is how long a client may take to run one of its
// tools when Config.ClientToolTimeout is zero.
const DefaultClientToolTimeout = 2 * time.Minute

// toolHub serves the clients' tools servers of a backend's chats. Its HTTP
// server starts with the first chat and stops when the backend closes.
type toolHub struct {
	log *slog.Logger

	mu     sync.Mutex
	srv    *http.Server
	done   chan struct{} // closed when srv's Serve has returned
	base   string        // "http://127.0.0.1:PORT/mcp/"
	chats  map[string]*chatTools
	closed bool
}

// register serves ct at a new secret path and returns its URL.
func (h *toolHub) register(ct *chatTools) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", errors.New("the agent backend is closed")
	}
	if h.srv == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("serving the clients' tools: %w", err)
		}
		h.srv = &http.Server{
			Handler:           http.HandlerFunc(h.serve),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
		}
		h.base = "http://" + ln.Addr().String() + "/mcp/"
		h.done = make(chan struct{})
		srv, done := h.srv, h.done
		go func() {
			defer close(done)
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.log.Warn("the clients' tools server stopped", "err", err)
			}
		}()
	}
	if h.chats == nil {
		h.chats = map[string]*chatTools{}
	}
	h.chats[ct.token] = ct
	return h.base + ct.token, nil
}

// unregister stops serving ct.
func (h *toolHub) unregister(ct *chatTools) {
	h.mu.Lock()
	delete(h.chats, ct.token)
	h.mu.Unlock()
}

// close stops the HTTP server and waits for it.
func (h *toolHub) close() {
	h.mu.Lock()
	h.closed = true
	srv, done := h.srv, h.done
	h.mu.Unlock()
	if srv != nil {
		srv.Close()
		<-done
	}
}

func (h *toolHub) serve(w http.ResponseWriter, r *http.Request) {
	// /mcp/TOKEN/VERSION: the version tells agents the tools changed.
	rest, ok := strings.CutPrefix(r.URL.Path, "/mcp/")
	token, _, _ := strings.Cut(rest, "/")
	h.mu.Lock()
	ct := h.chats[token]
	h.mu.Unlock()
	if !ok || ct == nil {
		http.NotFound(w, r)
		return
	}
	ct.serve(w, r)
}

// chatTools is the clients' tools server of one chat. Its MCP server is
// made when the agent first connects to it: many chats never use it.
type chatTools struct {
	s     *session
	chat  string
	token string
	url   string

	mu      sync.Mutex
	tools   map[string]string    // listed tool name → its definition as JSON
	defs    map[string]*mcp.Tool // the listed tools, for a server made later
	server  *mcp.Server          // nil until the agent connects
	handler *mcp.StreamableHTTPHandler
	closed  bool

	listed atomic.Value // string: the names of the listed tools, sorted, space-separated
}

func newChatTools(s *session, chat string) (*chatTools, error) {
	var secret [24]byte
	rand.Read(secret[:])
	ct := &chatTools{s: s, chat: chat, token: hex.EncodeToString(secret[:]), tools: map[string]string{}, defs: map[string]*mcp.Tool{}}
	url, err := s.b.hub.register(ct)
	if err != nil {
		return nil, err
	}
	ct.url = url
	return ct, nil
}

// serve answers a request of the agent, making the MCP server with the
// tools listed now on the first one.
func (ct *chatTools) serve(w http.ResponseWriter, r *http.Request) {
	ct.mu.Lock()
	if ct.closed {
		ct.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	if ct.server == nil {
		ct.server = mcp.NewServer(&mcp.Implementation{Name: "ahpd-clients", Title: "Tools of the AHP clients", Version: ct.s.b.opts.ClientVersion},
			&mcp.ServerOptions{Logger: slog.New(warnings{ct.s.log.With("mcp", ClientToolsServer).Handler()})})
		server := ct.server
		ct.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		for name, t := range ct.defs {
			ct.addLocked(name, t)
		}
	}
	handler := ct.handler
	ct.mu.Unlock()
	handler.ServeHTTP(w, r)
}

// addLocked lists a tool on the server.
func (ct *chatTools) addLocked(name string, t *mcp.Tool) {
	ct.server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return ct.s.callClientTool(ctx, ct.chat, name, req.Params.Arguments), nil
	})
}

// warnings passes on the records of Warn level and above: the MCP SDK
// logs every connection at Info.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
func (w warnings) WithAttrs(a []slog.Attr) slog.Handler { return warnings{w.Handler.WithAttrs(a)} }
func (w warnings) WithGroup(n string) slog.Handler      { return warnings{w.Handler.WithGroup(n)} }

// close stops serving the chat's tools and ends the agent's connections.
func (ct *chatTools) close() {
	ct.s.b.hub.unregister(ct)
	ct.mu.Lock()
	ct.closed = true
	server := ct.server
	ct.mu.Unlock()
	if server != nil {
		for ss := range server.Sessions() {
			ss.Close()
		}
	}
}

// acpServer is the server as the chat's ACP session gets it. Its URL ends
// with a digest of the tools listed now: an agent that keeps its MCP
// connections across session/load when the servers' declarations are the
// same (Claude Code) then connects again and lists the new tools.
func (ct *chatTools) acpServer() acpsdk.McpServer {
	names, _ := ct.listed.Load().(string)
	sum := sha256.Sum256([]byte(names))
	url := ct.url + "/" + hex.EncodeToString(sum[:6])
	return acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: ClientToolsServer, Type: "http", Url: url, Headers: []acpsdk.HttpHeader{}}}
}

// sync lists the tools of the session's active clients now: each name
// once, from the first client that publishes it. Tools whose name MCP does
// not allow are left out. The clients are read under ct.mu, so that a
// sync never undoes a later one.
func (ct *chatTools) sync() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.s.mu.Lock()
	clients := ct.s.activeClientsLocked()
	ct.s.mu.Unlock()
	want := map[string]*mcp.Tool{}
	defs := map[string]string{}
	for _, c := range clients {
		for _, d := range c.Tools {
			if _, dup := want[d.Name]; dup || !validToolName(d.Name) {
				continue
			}
			t := mcpTool(d)
			b, _ := json.Marshal(t)
			want[d.Name], defs[d.Name] = t, string(b)
		}
	}
	var gone []string
	for name := range ct.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(ct.tools, name)
			delete(ct.defs, name)
		}
	}
	if len(gone) > 0 && ct.server != nil {
		ct.server.RemoveTools(gone...)
	}
	for name, t := range want {
		if ct.tools[name] == defs[name] {
			continue
		}
		ct.tools[name], ct.defs[name] = defs[name], t
		if ct.server != nil {
			ct.addLocked(name, t)
		}
	}
	names := make([]string, 0, len(ct.tools))
	for name := range ct.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	ct.listed.Store(strings.Join(names, " "))
}

// signature names the server and its tools, for mcpServersLocked: a chat
// whose ACP session was opened with other tools is loaded again before its
// next prompt, for agents that list a server's tools only when they
// connect to it (and miss notifications/tools/list_changed).
func (ct *chatTools) signature() string {
	names, _ := ct.listed.Load().(string)
	return ClientToolsServer + "(" + names + ")"
}

// validToolName reports whether MCP allows name: 1 to 128 letters, digits,
// '_', '-' and '.'.
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// mcpTool is an AHP tool definition as MCP lists it. A missing input
// schema becomes the empty object schema; the
// output schema is left out, since the client's result need not carry the
// structured content it would promise.
func mcpTool(d protocol.ToolDefinition) *mcp.Tool {
	t := &mcp.Tool{Name: d.Name}
	if d.Title != nil {
		t.Title = *d.Title
	}
	if d.Description != nil {
		t.Description = *d.Description
	}
	schema := map[string]any{"type": "object"}
	if d.InputSchema != nil {
		if b, err := jsonv2.Marshal(d.InputSchema); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && m != nil {
				m["type"] = "object"
				schema = m
			}
		}
	}
	t.InputSchema = schema
	return t
}

// clientCall is a call of a client's tool waiting for its result.
type clientCall struct {
	turn *turn
	done chan protocol.ToolCallResult // buffered: receives one result
}

// clientCallKey names a client tool call: its chat and its id (unique in
// the turn, whose id makes it unique in the chat).
type clientCallKey struct{ chat, turn, id string }

// activeClientsLocked returns the session's active clients: the host's
// state when the host can tell, else what the session was told of them.
func (s *session) activeClientsLocked() []protocol.SessionActiveClient {
	if r, ok := s.host.(interface {
		SessionState() *protocol.SessionState
	}); ok {
		if st := r.SessionState(); st != nil {
			return st.ActiveClients
		}
	}
	return slices.Clone(s.clients)
}

// syncClientTools relists the clients' tools in every chat's server.
func (s *session) syncClientTools() {
	s.mu.Lock()
	var servers []*chatTools
	for _, c := range s.chats {
		if c.tools != nil {
			servers = append(servers, c.tools)
		}
	}
	s.mu.Unlock()
	for _, ct := range servers {
		ct.sync()
	}
}

// clientsChanged follows the session's active clients as the session is
// told of them, for a host that cannot tell its state.
func (s *session) clientsChanged(a protocol.StateAction) {
	s.mu.Lock()
	switch a := a.(type) {
	case *protocol.SessionActiveClientSetAction:
		i := -1
		for j, c := range s.clients {
			if c.ClientID == a.ActiveClient.ClientID {
				i = j
			}
		}
		if i >= 0 {
			s.clients[i] = a.ActiveClient
		} else {
			s.clients = append(s.clients, a.ActiveClient)
		}
	case *protocol.SessionActiveClientRemovedAction:
		out := s.clients[:0]
		for _, c := range s.clients {
			if c.ClientID != a.ClientID {
				out = append(out, c)
			}
		}
		s.clients = out
	}
	s.mu.Unlock()
	s.syncClientTools()
}

// chatToolsFor returns the chat's clients' tools server, starting it, or
// nil when the agent on p cannot reach it (no HTTP MCP servers).
func (s *session) chatToolsFor(c *chat, p *process) *chatTools {
	if !p.init.AgentCapabilities.McpCapabilities.Http {
		return nil
	}
	s.mu.Lock()
	if ct := c.tools; ct != nil || s.closed {
		s.mu.Unlock()
		return ct
	}
	s.mu.Unlock()
	ct, err := newChatTools(s, c.uri)
	if err != nil {
		s.log.Warn("cannot offer the clients' tools to the agent", "err", err)
		return nil
	}
	s.mu.Lock()
	if c.tools != nil || s.closed {
		existing := c.tools
		s.mu.Unlock()
		ct.close()
		return existing
	}
	c.tools = ct
	s.mu.Unlock()
	ct.sync()
	return ct
}

// callClientTool runs a call of the agent to a client's tool in the
// chat's running turn, and returns what the agent is answered.
func (s *session) callClientTool(ctx context.Context, chatURI, name string, args json.RawMessage) *mcp.CallToolResult {
	input := "{}"
	if len(args) > 0 {
		input = string(args)
	}
	s.mu.Lock()
	c := s.chats[chatURI]
	var t *turn
	if c != nil {
		t = c.running
	}
	if t == nil || t.ended || s.closed {
		s.mu.Unlock()
		return toolError(fmt.Sprintf("No turn is running in the chat; the tool %s cannot run.", name))
	}
	owner, def := toolOwner(s.activeClientsLocked(), name, t.context.client)
	if owner == "" {
		s.mu.Unlock()
		return toolError(fmt.Sprintf("No client of the session offers the tool %s now.", name))
	}
	display := name
	if def.Title != nil && *def.Title != "" {
		display = *def.Title
	}
	id := t.nextID("client")
	key := clientCallKey{chatURI, t.id, id}
	call := &clientCall{turn: t, done: make(chan protocol.ToolCallResult, 1)}
	if s.clientCalls == nil {
		s.clientCalls = map[clientCallKey]*clientCall{}
	}
	s.clientCalls[key] = call
	ok := s.emit(t, &protocol.ChatToolCallStartAction{TurnID: t.id, ToolCallID: id, ToolName: name, DisplayName: display,
		Contributor: &protocol.ToolCallClientContributor{ClientID: owner}}) &&
		s.emit(t, &protocol.ChatToolCallReadyAction{TurnID: t.id, ToolCallID: id, InvocationMessage: protocol.PlainText(display),
			ToolInput: protocol.Ptr(protocol.InlineToolInput(input)), Confirmed: protocol.Ptr(protocol.ToolCallConfirmationReasonNotNeeded)})
	if !ok {
		delete(s.clientCalls, key)
		s.mu.Unlock()
		return toolError("The turn ended before the tool could run.")
	}
	s.mu.Unlock()

	timeout := DefaultClientToolTimeout
	if d := time.Duration(s.b.cfg.ClientToolTimeout); d > 0 {
		timeout = d
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var why string
	select {
	case res := <-call.done:
		return mcpResult(res)
	case <-timer.C:
		why = fmt.Sprintf("The client %s did not run the tool within %s.", owner, timeout)
	case <-ctx.Done():
		why = "The agent stopped waiting for the tool."
	case <-s.ctx.Done():
		why = "The session closed."
	}
	s.mu.Lock()
	if s.clientCalls[key] == call {
		delete(s.clientCalls, key)
		s.emit(t, &protocol.ChatToolCallCompleteAction{TurnID: t.id, ToolCallID: id, Result: protocol.ToolCallResult{
			Success: false, PastTenseMessage: protocol.PlainText(why), Error: &protocol.ToolCallResultError{Message: why}}})
	}
	s.mu.Unlock()
	select {
	case res := <-call.done:
		// The result came meanwhile.
		return mcpResult(res)
	default:
	}
	return toolError(why)
}

// toolOwner picks the client that runs a tool: prefer, the client that
// started the turn, when it offers it, else the first active client that
// does.
func toolOwner(clients []protocol.SessionActiveClient, name, prefer string) (string, protocol.ToolDefinition) {
	owner := ""
	var def protocol.ToolDefinition
	for _, c := range clients {
		for _, d := range c.Tools {
			if d.Name != name {
				continue
			}
			if owner == "" || c.ClientID == prefer {
				owner, def = c.ClientID, d
			}
		}
	}
	return owner, def
}

// clientToolDone takes the result of a client's tool call (from the client,
// or from the host when the client left).
func (s *session) clientToolDone(chatURI string, a *protocol.ChatToolCallCompleteAction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := clientCallKey{chatURI, a.TurnID, a.ToolCallID}
	if call := s.clientCalls[key]; call != nil {
		delete(s.clientCalls, key)
		call.done <- a.Result
	}
}

// clientCallsOfLocked reports whether a client runs a tool for the turn.
// Callers hold s.mu.
func (s *session) clientCallsOfLocked(t *turn) bool {
	for _, call := range s.clientCalls {
		if call.turn == t {
			return true
		}
	}
	return false
}

// endClientCallsLocked fails the client tool calls of a turn that ended.
// Callers hold s.mu.
func (s *session) endClientCallsLocked(t *turn) {
	for key, call := range s.clientCalls {
		if call.turn == t {
			delete(s.clientCalls, key)
			msg := "The turn ended before the client ran the tool."
			call.done <- protocol.ToolCallResult{Success: false, PastTenseMessage: protocol.PlainText(msg), Error: &protocol.ToolCallResultError{Message: msg}}
		}
	}
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// mcpResult is a client's tool call result as MCP answers it: its text
// content, other content as JSON text, its structured content, and its
// error message when it failed.
func mcpResult(r protocol.ToolCallResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: !r.Success, Content: []mcp.Content{}}
	for _, c := range r.Content {
		if tc, ok := c.(*protocol.ToolResultTextContent); ok {
			res.Content = append(res.Content, &mcp.TextContent{Text: tc.Text})
			continue
		}
		if b, err := jsonv2.Marshal(c); err == nil {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(b)})
		}
	}
	if r.StructuredContent != nil {
		if b, err := jsonv2.Marshal(r.StructuredContent); err == nil {
			res.StructuredContent = json.RawMessage(b)
		}
	}
	if r.Error != nil && r.Error.Message != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: r.Error.Message})
	}
	if len(res.Content) == 0 {
		if msg := r.PastTenseMessage.Text; msg != "" {
			res.Content = append(res.Content, &mcp.TextContent{Text: msg})
		}
	}
	return res
}
