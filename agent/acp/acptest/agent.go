// Package acptest is a scripted ACP agent for tests: the agent side of the
// ACP Go SDK, driven by the text of each prompt. It needs no model and no
// network, and behaves the same every time.
//
// Quick start (as a subprocess of the code under test):
//
//	func main() { acptest.Serve(os.Stdin, os.Stdout) }
//
// Each line of a prompt is one command; a prompt whose first word is not a
// command is answered with "You said: " and the prompt, one chunk per word
// (the reply of the host's built-in echo agent, so the two can be compared).
//
//	say TEXT             one agent_message_chunk
//	words TEXT           one chunk per word
//	think TEXT           one agent_thought_chunk
//	tool TITLE           a tool call that asks for permission, then runs
//	                     (allowed) or fails (rejected)
//	tool-first TITLE     the same, but the permission request comes before
//	                     the tool_call update that announces the call
//	autotool TITLE       a tool call that runs without asking, with a diff
//	                     and a location
//	read PATH            fs/read_text_file; says the content or the error
//	write PATH TEXT      fs/write_text_file; says "wrote PATH" or the error
//	slow N               N chunks 20 ms apart; after session/cancel it sends
//	                     3 more chunks and answers "cancelled" 150 ms later
//	hang                 waits forever and ignores session/cancel
//	crash                sends a chunk, writes to stderr and exits with status 3
//	fail TEXT            writes TEXT to stderr and fails the prompt
//	child                starts a child process (sleep) and says "child PID"
//	plan                 a plan update
//	usage                a usage update, and token usage on the answer
//	title TEXT           a session_info_update with a title
//	term CMD ARGS        runs a command in a terminal (terminal/create),
//	                     waits for it, says its output, releases it
//	termkeep CMD ARGS    starts a command in a terminal and says its first
//	                     output, leaving it running and unreleased
//	mode ID              a current_mode_update (the mode changes)
//	effort VALUE         a config_option_update (the effort changes)
//	commands             an available_commands_update
//	unknown              an update whose kind the SDK does not know
//	stop REASON          answer with that stop reason
//	whoami               says "session ID" with the ACP session id
//	spam N               writes N coloured lines to stderr, then says "spammed"
//	garbage              writes a line that is not JSON-RPC on stdout, then hangs
//	bigline N            writes one line of N MiB on stdout, then hangs
//	closeout             closes its stdout and keeps running
//	mcp-servers          says the names of the session's MCP servers
//	mcp SERVER TOOL JSON calls a tool of one of them and says the result
//	                     (see mcp.go)
//
// With GarbageEnv set to "1" the agent writes a banner that is not
// JSON-RPC on stdout before it serves. AuthMethodsEnv, a comma-separated
// list of ids, makes it advertise those authentication methods (the first
// one an environment variable method, the others agent methods);
// authenticate then fails for any other id.
//
// With LoadSessionEnv set to "1" in its environment the agent also
// advertises session/load: it then accepts any session id, as if it had
// kept that session from an earlier run.
// With RefuseConfigEnv set to a comma-separated list of "mode", "model"
// and "effort", the agent refuses to change those (set_mode, set_model,
// set_config_option fail).
// With FailSessionEnv set, session/new writes its value to stderr and
// fails. With ModelOptionEnv set to "1" the models are a config option,
// "model", of category "model", rather than ACP models.
//
// Sessions advertise two modes ("ask", "code"), two models ("small",
// "large") and one config option, "effort" ("low", "medium", "high");
// set_mode, set_model and set_config_option are recorded and echoed by
// "state".
package acptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Name and Version are what the agent reports at initialize.
const (
	Name    = "acptest"
	Version = "1.0.0"
)

// AgentEnv, set to "1", makes ServeIfAsked run the agent.
const AgentEnv = "AHP_ACPTEST_AGENT"

// ServeIfAsked lets a test binary be its own scripted agent: when AgentEnv
// is "1" it serves the agent on stdin and stdout and exits; otherwise it
// returns at once. Call it first in TestMain, and start the agent as the
// test binary itself with AgentEnv=1 and -test.run=^$.
func ServeIfAsked() {
	if os.Getenv(MCPServerEnv) == "1" {
		if err := ServeMCP(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(LoginEnv) == "1" {
		// The login of the terminal method: it signs in by writing the
		// marker file.
		if err := os.WriteFile(os.Getenv(LoginFileEnv), []byte("signed in\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("Signed in.")
		os.Exit(0)
	}
	if os.Getenv(AgentEnv) != "1" {
		return
	}
	if err := Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// LoadSessionEnv names the environment variable that makes the agent
// advertise session/load.
const LoadSessionEnv = "ACPTEST_LOAD_SESSION"

// GarbageEnv, AuthMethodsEnv and RefuseConfigEnv name environment
// variables of the agent (see the package documentation).
const (
	GarbageEnv      = "ACPTEST_GARBAGE"
	AuthMethodsEnv  = "ACPTEST_AUTH_METHODS"
	RefuseConfigEnv = "ACPTEST_REFUSE_CONFIG"
	// FailSessionEnv makes session/new print its value to stderr and
	// fail, as an agent without a valid login does.
	FailSessionEnv = "ACPTEST_FAIL_SESSION"
	// ModelOptionEnv set to "1" offers the models as a config option of
	// category "model" instead of ACP models, as Claude Code does.
	ModelOptionEnv = "ACPTEST_MODEL_OPTION"
	// RequireKeyEnv makes session/new fail with "Authentication
	// required" unless ACPTEST_API_KEY holds its value or the file
	// LoginFileEnv names exists.
	RequireKeyEnv = "ACPTEST_REQUIRE_KEY"
	// LoginFileEnv names the marker file of the login: when set, the
	// agent also advertises a terminal authentication method "login"
	// that runs the agent's command with LoginEnv set to "1", which
	// writes the file and exits.
	LoginFileEnv = "ACPTEST_LOGIN_FILE"
	LoginEnv     = "ACPTEST_LOGIN"
)

// Serve runs the agent over r (its stdin) and w (its stdout) until r ends.
// When w is an io.Closer, "closeout" closes it.
func Serve(r io.Reader, w io.Writer) error {
	lw := &lineWriter{w: w}
	if os.Getenv(GarbageEnv) == "1" {
		if _, err := io.WriteString(w, "Welcome to the test agent!\n"); err != nil {
			return err
		}
	}
	a := &agent{out: lw, sessions: map[acpsdk.SessionId]*session{}, canLoad: os.Getenv(LoadSessionEnv) == "1", modelOpt: os.Getenv(ModelOptionEnv) == "1",
		refuse: strings.Split(os.Getenv(RefuseConfigEnv), ",")}
	if ids := os.Getenv(AuthMethodsEnv); ids != "" {
		for i, id := range strings.Split(ids, ",") {
			if i == 0 {
				a.auth = append(a.auth, acpsdk.AuthMethod{EnvVar: &acpsdk.AuthMethodEnvVarInline{Id: id, Name: "API key", Type: "env_var",
					Vars: []acpsdk.AuthEnvVar{{Name: "ACPTEST_API_KEY"}}}})
				continue
			}
			a.auth = append(a.auth, acpsdk.AuthMethod{Agent: &acpsdk.AuthMethodAgent{Id: id, Name: "Log in as " + id,
				Description: acpsdk.Ptr("Opens a browser.")}})
		}
	}
	if os.Getenv(LoginFileEnv) != "" {
		a.auth = append(a.auth, acpsdk.AuthMethod{Terminal: &acpsdk.AuthMethodTerminalInline{Id: "login", Name: "Log in", Type: "terminal",
			Args: []string{"-test.run=^$"}, Env: map[string]any{LoginEnv: "1"}}})
	}
	// The SDK reads requests as soon as the connection exists: the
	// handlers use a.conn, so reading waits until it is set.
	set := make(chan struct{})
	a.conn = acpsdk.NewAgentSideConnection(a, lw, gatedReader{r, set})
	close(set)
	<-a.conn.Done()
	return nil
}

// gatedReader reads from r once open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// lineWriter serialises writes so raw lines can be sent between the SDK's.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type agent struct {
	conn *acpsdk.AgentSideConnection
	out  *lineWriter

	canLoad  bool                // advertise session/load
	modelOpt bool                // models as a config option
	refuse   []string            // what set_mode, set_model and set_config_option refuse to change
	auth     []acpsdk.AuthMethod // advertised authentication methods

	mu       sync.Mutex
	next     int
	sessions map[acpsdk.SessionId]*session
}

type session struct {
	id     acpsdk.SessionId
	cwd    string
	mcp    []acpsdk.McpServer // the MCP servers of session/new or the latest session/load
	mode   string
	model  string
	effort string

	mu     sync.Mutex
	cancel chan struct{} // closed by session/cancel; replaced per prompt
}

func (a *agent) session(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, fmt.Errorf("no session %s", id)
	}
	return s, nil
}

func (a *agent) Initialize(_ context.Context, _ acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:       &acpsdk.Implementation{Name: Name, Title: acpsdk.Ptr("ACP test agent"), Version: Version},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        a.canLoad,
			PromptCapabilities: acpsdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    acpsdk.McpCapabilities{Http: true},
		},
		AuthMethods: append([]acpsdk.AuthMethod{}, a.auth...),
	}, nil
}

func (a *agent) Authenticate(_ context.Context, p acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	if len(a.auth) > 0 && !slices.ContainsFunc(a.auth, func(m acpsdk.AuthMethod) bool {
		return m.EnvVar != nil && m.EnvVar.Id == p.MethodId || m.Agent != nil && m.Agent.Id == p.MethodId || m.Terminal != nil && m.Terminal.Id == p.MethodId
	}) {
		return acpsdk.AuthenticateResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "unknown authentication method " + p.MethodId})
	}
	return acpsdk.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if want := os.Getenv(RequireKeyEnv); want != "" {
		// It prints the key it got, as careless agents do: the host masks
		// it.
		key := os.Getenv("ACPTEST_API_KEY")
		_, err := os.Stat(os.Getenv(LoginFileEnv))
		switch {
		case key == want:
			fmt.Fprintln(os.Stderr, "using the key "+key)
		case os.Getenv(LoginFileEnv) != "" && err == nil:
		default:
			fmt.Fprintf(os.Stderr, "no valid API key (%q) and not logged in\n", key)
			return acpsdk.NewSessionResponse{}, acpsdk.NewAuthRequired(nil)
		}
	}
	if why := os.Getenv(FailSessionEnv); why != "" {
		fmt.Fprintln(os.Stderr, why)
		return acpsdk.NewSessionResponse{}, acpsdk.NewInternalError(map[string]any{"error": "Query closed before response received"})
	}
	a.mu.Lock()
	a.next++
	// The process id keeps ids apart across restarts of the agent.
	id := acpsdk.SessionId("sess-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(a.next))
	a.sessions[id] = &session{id: id, cwd: p.Cwd, mcp: p.McpServers, mode: "ask", model: "small", effort: "medium", cancel: make(chan struct{})}
	a.mu.Unlock()
	// Some agents announce their commands before answering.
	err := a.conn.SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: id, Update: acpsdk.SessionUpdate{
		AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: []acpsdk.AvailableCommand{
			{Name: "review", Description: "Review the current change"},
		}}}})
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	res := acpsdk.NewSessionResponse{
		SessionId: id,
		Modes: &acpsdk.SessionModeState{CurrentModeId: "ask", AvailableModes: []acpsdk.SessionMode{
			{Id: "ask", Name: "Ask", Description: acpsdk.Ptr("Asks before every change")},
			{Id: "code", Name: "Code"},
		}},
		Models: &acpsdk.SessionModelState{CurrentModelId: "small", AvailableModels: []acpsdk.ModelInfo{
			{ModelId: "small", Name: "Small"},
			{ModelId: "large", Name: "Large", Description: acpsdk.Ptr("The big one")},
		}},
		ConfigOptions: a.configOptions("medium", "small"),
	}
	if a.modelOpt {
		res.Models = nil
	}
	return res, nil
}

// configOptions are the session's config options: one select, "effort".
func configOptions(effort string) []acpsdk.SessionConfigOption {
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{
		{Value: "low", Name: "Low"},
		{Value: "medium", Name: "Medium"},
		{Value: "high", Name: "High", Description: acpsdk.Ptr("Thinks the longest")},
	}
	return []acpsdk.SessionConfigOption{{Select: &acpsdk.SessionConfigOptionSelect{
		Id: "effort", Name: "Effort", Description: acpsdk.Ptr("How hard the agent thinks"),
		Category: acpsdk.Ptr(acpsdk.SessionConfigOptionCategoryThoughtLevel), Type: "select",
		CurrentValue: acpsdk.SessionConfigValueId(effort), Options: acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}}
}

// LoadSession takes up a session of an earlier run of the agent. This
// agent keeps nothing between runs, so it only registers the id again.
func (a *agent) LoadSession(_ context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	if !a.canLoad {
		return acpsdk.LoadSessionResponse{}, errors.New("session/load is not supported")
	}
	a.mu.Lock()
	if a.sessions[p.SessionId] == nil {
		a.sessions[p.SessionId] = &session{id: p.SessionId, cwd: p.Cwd, mode: "ask", model: "small", effort: "medium", cancel: make(chan struct{})}
	}
	s := a.sessions[p.SessionId]
	a.mu.Unlock()
	s.mu.Lock()
	s.mcp = p.McpServers
	s.mu.Unlock()
	return acpsdk.LoadSessionResponse{}, nil
}

func (a *agent) SetSessionMode(_ context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	if slices.Contains(a.refuse, "mode") {
		return acpsdk.SetSessionModeResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "this agent's mode cannot change"})
	}
	s.mu.Lock()
	s.mode = string(p.ModeId)
	s.mu.Unlock()
	return acpsdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel records the model; the SDK finds it by its
// method set.
func (a *agent) UnstableSetSessionModel(_ context.Context, p acpsdk.UnstableSetSessionModelRequest) (acpsdk.UnstableSetSessionModelResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, err
	}
	if slices.Contains(a.refuse, "model") {
		return acpsdk.UnstableSetSessionModelResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "this agent's model cannot change"})
	}
	s.mu.Lock()
	s.model = string(p.ModelId)
	s.mu.Unlock()
	return acpsdk.UnstableSetSessionModelResponse{}, nil
}

// SetSessionConfigOption sets "effort" to one of its values.
func (a *agent) SetSessionConfigOption(_ context.Context, p acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "effort takes a value id"})
	}
	s, err := a.session(v.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	if slices.Contains(a.refuse, "effort") {
		return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "this agent's effort cannot change"})
	}
	if v.ConfigId == "model" && a.modelOpt {
		if v.Value != "small" && v.Value != "large" {
			return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "no model " + string(v.Value)})
		}
		s.mu.Lock()
		s.model = string(v.Value)
		effort := s.effort
		s.mu.Unlock()
		return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(effort, string(v.Value))}, nil
	}
	if v.ConfigId != "effort" {
		return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "no config option " + string(v.ConfigId)})
	}
	switch v.Value {
	case "low", "medium", "high":
	default:
		return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "effort cannot be " + string(v.Value)})
	}
	s.mu.Lock()
	s.effort = string(v.Value)
	s.mu.Unlock()
	s.mu.Lock()
	model := s.model
	s.mu.Unlock()
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(string(v.Value), model)}, nil
}

// configOptions returns the session's config options: the effort, and
// the model when it is an option.
func (a *agent) configOptions(effort, model string) []acpsdk.SessionConfigOption {
	opts := configOptions(effort)
	if !a.modelOpt {
		return opts
	}
	models := acpsdk.SessionConfigSelectOptionsUngrouped{
		{Value: "small", Name: "Small"},
		{Value: "large", Name: "Large", Description: acpsdk.Ptr("The big one")},
	}
	return append(opts, acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Id: "model", Name: "Model", Category: acpsdk.Ptr(acpsdk.SessionConfigOptionCategoryModel), Type: "select",
		CurrentValue: acpsdk.SessionConfigValueId(model), Options: acpsdk.SessionConfigSelectOptions{Ungrouped: &models},
	}})
}

func (a *agent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, errors.New("not supported")
}

func (a *agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, errors.New("not supported")
}

func (a *agent) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	a.mu.Lock()
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	return acpsdk.CloseSessionResponse{}, nil
}

func (a *agent) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	select {
	case <-s.cancel:
	default:
		close(s.cancel)
	}
	s.mu.Unlock()
	return nil
}

func (a *agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	s.mu.Lock()
	s.cancel = make(chan struct{})
	cancel := s.cancel
	s.mu.Unlock()
	var text strings.Builder
	for _, b := range p.Prompt {
		switch {
		case b.Text != nil:
			text.WriteString(b.Text.Text)
		case b.ResourceLink != nil:
			fmt.Fprintf(&text, " [link %s]", b.ResourceLink.Uri)
		case b.Image != nil:
			fmt.Fprintf(&text, " [image %s]", b.Image.MimeType)
		case b.Resource != nil:
			text.WriteString(" [resource]")
		}
	}
	r := &run{a: a, s: s, ctx: ctx, cancel: cancel, stop: acpsdk.StopReasonEndTurn}
	r.play(text.String())
	resp := acpsdk.PromptResponse{StopReason: r.stop}
	if r.usage {
		resp.Usage = &acpsdk.Usage{InputTokens: 12, OutputTokens: 34, TotalTokens: 46, CachedReadTokens: acpsdk.Ptr(5)}
	}
	return resp, r.err
}

// run plays one prompt.
type run struct {
	a      *agent
	s      *session
	ctx    context.Context
	cancel chan struct{}
	stop   acpsdk.StopReason
	usage  bool
	err    error
	tools  int
}

func (r *run) send(u acpsdk.SessionUpdate) {
	if r.err != nil {
		return
	}
	r.err = r.a.conn.SessionUpdate(r.ctx, acpsdk.SessionNotification{SessionId: r.s.id, Update: u})
}

func (r *run) say(text string) { r.send(acpsdk.UpdateAgentMessageText(text)) }

func (r *run) cancelled() bool {
	select {
	case <-r.cancel:
		return true
	default:
		return false
	}
}

var commands = map[string]bool{
	"say": true, "words": true, "think": true, "tool": true, "tool-first": true, "autotool": true,
	"read": true, "write": true, "slow": true, "hang": true, "crash": true, "child": true,
	"plan": true, "usage": true, "title": true, "mode": true, "commands": true, "unknown": true,
	"stop": true, "state": true, "whoami": true, "spam": true, "garbage": true, "bigline": true,
	"closeout": true, "term": true, "termkeep": true, "effort": true, "fail": true,
	"mcp": true, "mcp-servers": true,
}

func (r *run) play(text string) {
	if f := strings.Fields(text); len(f) == 0 || !commands[f[0]] {
		r.words("You said: " + text)
		return
	}
	for line := range strings.SplitSeq(text, "\n") {
		if r.err != nil || r.stop == acpsdk.StopReasonCancelled {
			return
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		r.command(cmd, arg)
	}
}

func (r *run) words(text string) {
	for i, w := range strings.Fields(text) {
		if i > 0 {
			w = " " + w
		}
		r.say(w)
	}
}

func (r *run) command(cmd, arg string) {
	switch cmd {
	case "say":
		r.say(arg)
	case "words":
		r.words(arg)
	case "think":
		r.send(acpsdk.UpdateAgentThoughtText(arg))
	case "tool":
		r.tool(arg, false)
	case "tool-first":
		r.tool(arg, true)
	case "autotool":
		r.autotool(arg)
	case "read":
		resp, err := r.a.conn.ReadTextFile(r.ctx, acpsdk.ReadTextFileRequest{SessionId: r.s.id, Path: arg})
		if err != nil {
			r.say("read error: " + errorText(err))
			return
		}
		r.say(resp.Content)
	case "write":
		path, content, _ := strings.Cut(arg, " ")
		_, err := r.a.conn.WriteTextFile(r.ctx, acpsdk.WriteTextFileRequest{SessionId: r.s.id, Path: path, Content: content})
		if err != nil {
			r.say("write error: " + errorText(err))
			return
		}
		r.say("wrote " + path)
	case "term":
		r.term(arg)
	case "termkeep":
		r.termKeep(arg)
	case "slow":
		n, _ := strconv.Atoi(arg)
		r.slow(n)
	case "hang":
		<-r.ctx.Done()
		r.err = r.ctx.Err()
	case "fail":
		fmt.Fprintln(os.Stderr, arg)
		r.err = acpsdk.NewInternalError(map[string]any{"error": "process exited with code 1"})
	case "crash":
		r.say("about to crash")
		fmt.Fprintln(os.Stderr, "acptest: crashing on purpose")
		os.Exit(3)
	case "child":
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			r.say("child error: " + err.Error())
			return
		}
		r.say("child " + strconv.Itoa(c.Process.Pid))
	case "plan":
		r.send(acpsdk.UpdatePlan(acpsdk.PlanEntry{Content: "step one", Priority: "high", Status: "completed"},
			acpsdk.PlanEntry{Content: "step two", Priority: "low", Status: "pending"}))
	case "usage":
		r.usage = true
		r.send(acpsdk.SessionUpdate{UsageUpdate: &acpsdk.SessionUsageUpdate{Used: 1000, Size: 200000,
			Cost: &acpsdk.Cost{Amount: 0.25, Currency: "USD"}}})
	case "title":
		r.send(acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Title: acpsdk.Ptr(arg)}})
	case "mode":
		r.s.mu.Lock()
		r.s.mode = arg
		r.s.mu.Unlock()
		r.send(acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: acpsdk.SessionModeId(arg)}})
	case "effort":
		r.s.mu.Lock()
		r.s.effort = arg
		r.s.mu.Unlock()
		r.send(acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{ConfigOptions: configOptions(arg)}})
	case "commands":
		r.send(acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: []acpsdk.AvailableCommand{
			{Name: "review", Description: "Review the current change"},
			{Name: "test", Description: "Run the tests"},
		}}})
	case "unknown":
		// Kinds a newer agent might send: one with content (which the SDK
		// would take for a user message chunk) and one without.
		for _, kind := range []string{"future_thing", "another_future_thing"} {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":%q,"content":{"type":"text","text":"should not appear"}}}}`+"\n", r.s.id, kind)
			if kind == "another_future_thing" {
				line = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":%q,"value":1}}}`+"\n", r.s.id, kind)
			}
			if _, err := r.a.out.Write([]byte(line)); err != nil {
				r.err = err
			}
		}
	case "stop":
		r.stop = acpsdk.StopReason(arg)
	case "whoami":
		r.say("session " + string(r.s.id))
	case "spam":
		n, _ := strconv.Atoi(arg)
		w := bufio.NewWriter(os.Stderr)
		for i := range n {
			fmt.Fprintf(w, "\x1b[31mline %d\x1b[0m \x1b]0;title\x07of spam\n", i+1)
		}
		w.Flush()
		r.say("spammed")
	case "garbage":
		r.rawLine([]byte("this is not JSON-RPC\n"))
		<-r.ctx.Done()
		r.err = r.ctx.Err()
	case "bigline":
		n, _ := strconv.Atoi(arg)
		line := make([]byte, n<<20+1)
		start := copy(line, `{"jsonrpc":"2.0","method":"session/update","params":{"x":"`)
		for i := start; i < len(line)-1; i++ {
			line[i] = 'x'
		}
		line[len(line)-1] = '\n'
		r.rawLine(line)
		<-r.ctx.Done()
		r.err = r.ctx.Err()
	case "closeout":
		r.a.out.mu.Lock()
		if c, ok := r.a.out.w.(io.Closer); ok {
			c.Close()
		}
		r.a.out.mu.Unlock()
		<-r.ctx.Done()
		r.err = r.ctx.Err()
	case "mcp":
		r.mcpCall(arg)
	case "mcp-servers":
		r.mcpServers()
	case "state":
		r.s.mu.Lock()
		msg := fmt.Sprintf("mode=%s model=%s effort=%s cwd=%s", r.s.mode, r.s.model, r.s.effort, r.s.cwd)
		r.s.mu.Unlock()
		r.say(msg)
	}
}

// rawLine writes bytes to stdout between the SDK's messages.
func (r *run) rawLine(b []byte) {
	if _, err := r.a.out.Write(b); err != nil {
		r.err = err
	}
}

func (r *run) slow(n int) {
	for i := range n {
		if r.cancelled() {
			for j := range 3 {
				r.say(fmt.Sprintf(" late%d", j+1))
			}
			time.Sleep(150 * time.Millisecond)
			r.stop = acpsdk.StopReasonCancelled
			return
		}
		r.say(fmt.Sprintf(" w%d", i+1))
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *run) tool(title string, permissionFirst bool) {
	r.tools++
	id := acpsdk.ToolCallId("call-" + strconv.Itoa(r.tools))
	input := map[string]any{"title": title}
	announce := func() {
		r.send(acpsdk.StartToolCall(id, title, acpsdk.WithStartKind(acpsdk.ToolKindEdit),
			acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending), acpsdk.WithStartRawInput(input),
			acpsdk.WithStartLocations([]acpsdk.ToolCallLocation{{Path: "/tmp/x.txt", Line: acpsdk.Ptr(3)}})))
	}
	if !permissionFirst {
		announce()
	}
	resp, err := r.a.conn.RequestPermission(r.ctx, acpsdk.RequestPermissionRequest{
		SessionId: r.s.id,
		ToolCall: acpsdk.ToolCallUpdate{ToolCallId: id, Title: acpsdk.Ptr(title), Kind: acpsdk.Ptr(acpsdk.ToolKindEdit),
			Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending), RawInput: input},
		Options: []acpsdk.PermissionOption{
			{OptionId: "allow", Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: "always", Name: "Always allow", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: "reject", Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	if permissionFirst {
		announce()
	}
	if err != nil {
		r.err = err
		return
	}
	if resp.Outcome.Cancelled != nil {
		r.stop = acpsdk.StopReasonCancelled
		return
	}
	option := string(resp.Outcome.Selected.OptionId)
	if option == "reject" {
		r.send(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed)))
		r.say("tool rejected")
		return
	}
	r.send(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("working"))})))
	r.send(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("done: " + title))}),
		acpsdk.WithUpdateRawOutput(map[string]any{"ok": true, "option": option})))
	r.say("tool finished with " + option)
}

func (r *run) autotool(title string) {
	r.tools++
	id := acpsdk.ToolCallId("call-" + strconv.Itoa(r.tools))
	r.send(acpsdk.StartToolCall(id, title, acpsdk.WithStartKind(acpsdk.ToolKindRead),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress), acpsdk.WithStartRawInput(map[string]any{"path": "/tmp/a.txt"}),
		acpsdk.WithStartLocations([]acpsdk.ToolCallLocation{{Path: "/tmp/a.txt"}})))
	r.send(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateTitle(title+" (renamed)"), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{
			acpsdk.ToolContent(acpsdk.TextBlock("contents")),
			acpsdk.ToolDiffContent("/tmp/a.txt", "one\ntwo\nthree\n", "one\n2\n"),
		})))
}

// errorText returns the message of an ACP error, without the JSON wrapping.
func errorText(err error) string {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			if s, ok := m["error"].(string); ok {
				return s
			}
		}
		b, _ := json.Marshal(re.Data)
		return re.Message + " " + string(b)
	}
	return err.Error()
}

// createTerminal asks the client for a terminal running the command line
// (terminal/create), saying why when it cannot.
func (r *run) createTerminal(line string) (acpsdk.CreateTerminalResponse, bool) {
	f := strings.Fields(line)
	if len(f) == 0 {
		r.say("term error: no command")
		return acpsdk.CreateTerminalResponse{}, false
	}
	ct, err := r.a.conn.CreateTerminal(r.ctx, acpsdk.CreateTerminalRequest{SessionId: r.s.id, Command: f[0], Args: f[1:]})
	if err != nil {
		r.say("term error: " + errorText(err))
		return acpsdk.CreateTerminalResponse{}, false
	}
	return ct, true
}

// term runs a command in a client terminal (terminal/create), shows it as
// a tool call's terminal content, waits for it and reports its output.
func (r *run) term(line string) {
	ct, ok := r.createTerminal(line)
	if !ok {
		return
	}
	r.tools++
	id := acpsdk.ToolCallId("term-" + strconv.Itoa(r.tools))
	r.send(acpsdk.StartToolCall(id, "Run "+line, acpsdk.WithStartKind(acpsdk.ToolKindExecute), acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{{Terminal: &acpsdk.ToolCallContentTerminal{TerminalId: ct.TerminalId, Type: "terminal"}}})))
	exit, err := r.a.conn.WaitForTerminalExit(r.ctx, acpsdk.WaitForTerminalExitRequest{SessionId: r.s.id, TerminalId: ct.TerminalId})
	if err != nil {
		r.say("term error: " + errorText(err))
		return
	}
	out, err := r.a.conn.TerminalOutput(r.ctx, acpsdk.TerminalOutputRequest{SessionId: r.s.id, TerminalId: ct.TerminalId})
	if err != nil {
		r.say("term error: " + errorText(err))
		return
	}
	r.send(acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted)))
	code := -1
	if exit.ExitCode != nil {
		code = *exit.ExitCode
	}
	r.say(fmt.Sprintf("terminal %s exit=%d output=%q", ct.TerminalId, code, strings.TrimSpace(strings.ReplaceAll(out.Output, "\r", ""))))
	if _, err := r.a.conn.ReleaseTerminal(r.ctx, acpsdk.ReleaseTerminalRequest{SessionId: r.s.id, TerminalId: ct.TerminalId}); err != nil {
		r.say("term error: " + errorText(err))
	}
}

// termKeep starts a command in a terminal, waits for its first output and
// says "terminal ID output=..." without waiting for it to end or
// releasing it.
func (r *run) termKeep(line string) {
	ct, ok := r.createTerminal(line)
	if !ok {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := r.a.conn.TerminalOutput(r.ctx, acpsdk.TerminalOutputRequest{SessionId: r.s.id, TerminalId: ct.TerminalId})
		if err != nil {
			r.say("term error: " + errorText(err))
			return
		}
		if o := strings.TrimSpace(strings.ReplaceAll(out.Output, "\r", "")); o != "" || time.Now().After(deadline) {
			r.say(fmt.Sprintf("terminal %s output=%q", ct.TerminalId, o))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
