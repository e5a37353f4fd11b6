package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/internal/fileuri"
	"github.com/ahp-go/ahp/protocol"
)

// Defaults for Options.
const (
	DefaultCancelTimeout = 10 * time.Second
	DefaultKillTimeout   = 3 * time.Second
	DefaultStartTimeout  = time.Minute
	DefaultMaxRestarts   = 3
	DefaultRestartWindow = 10 * time.Minute
	DefaultMaxFileBytes  = 8 << 20
	DefaultQuietAfter    = 30 * time.Second
	DefaultExitGrace     = time.Second
	DefaultFlowResync    = time.Second
)

// Options tunes a Backend. The zero value is ready to use.
type Options struct {
	// Logger receives the bridge's logs and the agent's stderr. Nil
	// discards them.
	Logger *slog.Logger
	// CancelTimeout is how long an agent may take to end a cancelled turn
	// before it is restarted; Config.CancelTimeout overrides it. Zero
	// means DefaultCancelTimeout.
	CancelTimeout time.Duration
	// KillTimeout is how long an agent may take to exit after SIGTERM
	// before its process group gets SIGKILL. Zero means
	// DefaultKillTimeout.
	KillTimeout time.Duration
	// StartTimeout bounds starting an agent and its ACP handshake when a
	// turn restarts it. Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxRestarts is how many times a session's agent is restarted after
	// crashes within RestartWindow; after that its turns fail at once.
	// Zero means DefaultMaxRestarts; negative means never restart.
	MaxRestarts int
	// RestartWindow: zero means DefaultRestartWindow.
	RestartWindow time.Duration
	// MaxFileBytes bounds the files the agent reads and writes through
	// the host. Zero means DefaultMaxFileBytes.
	MaxFileBytes int64
	// ClientName and ClientVersion identify the host to the agent at
	// initialize. Empty means "ahpd" and "devel".
	ClientName, ClientVersion string
	// Environ is the environment the agent starts from, before
	// Config.Env. Nil means os.Environ().
	Environ []string
	// QuietAfter is how long a running turn may go without any update
	// from the agent before the chat's activity says so ("No output from
	// the agent for 30s", renewed as the silence lasts), for a model that
	// stalls or an agent that retries in silence. The activity clears at
	// the next update. Time spent waiting for a client to answer a
	// permission request does not count. Zero means DefaultQuietAfter;
	// negative turns the notice off.
	QuietAfter time.Duration
	// ExitGrace is how long the bridge waits for one end of an agent's
	// life to follow the other before acting on its own: a process that
	// outlives its ACP connection this long is taken for broken and
	// stopped; a failed call waits this long for the process to exit, to
	// say why it failed; after the process exited, its stderr may stay
	// open this long and its stdout (which a stray child may hold) twice
	// as long before the bridge closes them; and a prompt that failed
	// because the agent went away waits KillTimeout plus twice this for
	// its exit. Zero means DefaultExitGrace.
	ExitGrace time.Duration
	// Credentials keeps the keys clients sign agents in with
	// (Backend.Authenticate). Nil keeps them in memory, for the backend's
	// life.
	Credentials *Credentials
	// FlowResync bounds how long reading the agent's output waits, with
	// too many updates unhandled, for the count of handled ones to move
	// before it counts afresh (see the flow control in the package
	// documentation). Zero means DefaultFlowResync.
	FlowResync time.Duration
}

// Backend is one configured ACP agent. It implements agent.Backend: every
// AHP session gets its own agent process (see the package documentation).
//
// Its methods are safe for concurrent use.
type Backend struct {
	cfg  Config
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	probed   *probeResult
	probing  chan struct{} // closed when the probe in progress ends; nil when none is
	sessions map[*session]struct{}
	closed   bool

	hub *toolHub // serves the clients' tools to the agent (clienttools.go)

	// processes counts the agent processes running; restarts the starts
	// after a crash, over the backend's life.
	processes atomic.Int64
	restarts  atomic.Int64
}

// Stats is what a backend has running, for monitoring.
type Stats struct {
	// Sessions is how many sessions are open on the backend.
	Sessions int
	// Processes is how many agent processes are running.
	Processes int64
	// Restarts is how many times an agent was restarted after a crash.
	Restarts int64
}

// Stats reports what the backend has running.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	n := len(b.sessions)
	b.mu.Unlock()
	return Stats{Sessions: n, Processes: b.processes.Load(), Restarts: b.restarts.Load()}
}

// probeResult is what the agent reported when probed.
type probeResult struct {
	init       acpsdk.InitializeResponse
	models     *acpsdk.SessionModelState
	modes      *acpsdk.SessionModeState
	options    []acpsdk.SessionConfigOption
	sessionErr string // why session/new failed, when it did
	err        error

	// What the agent's last "_auth/status_update" said (Claude Code and
	// Codex push one): a kind of "none" means not signed in.
	authMu              sync.Mutex
	authKind, authLabel string
}

// New returns the backend of the agent cfg describes. It starts nothing:
// call Probe to learn what the agent reports, and Open starts one process
// per session.
func New(cfg Config, opts *Options) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CancelTimeout <= 0 {
		o.CancelTimeout = DefaultCancelTimeout
	}
	if cfg.CancelTimeout > 0 {
		o.CancelTimeout = time.Duration(cfg.CancelTimeout)
	}
	if o.KillTimeout <= 0 {
		o.KillTimeout = DefaultKillTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MaxRestarts == 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	if o.RestartWindow <= 0 {
		o.RestartWindow = DefaultRestartWindow
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.ExitGrace <= 0 {
		o.ExitGrace = DefaultExitGrace
	}
	if o.FlowResync <= 0 {
		o.FlowResync = DefaultFlowResync
	}
	if o.QuietAfter == 0 {
		o.QuietAfter = DefaultQuietAfter
	}
	if o.ClientName == "" {
		o.ClientName = "ahpd"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "devel"
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Credentials == nil {
		o.Credentials, _ = OpenCredentials("")
	}
	cfg.LoginCommands = withKnownLogins(cfg)
	return &Backend{
		cfg:      cfg,
		opts:     o,
		log:      o.Logger.With("agent", cfg.Name),
		sessions: map[*session]struct{}{},
		hub:      &toolHub{log: o.Logger.With("agent", cfg.Name)},
	}, nil
}

// Config returns the configuration the backend was made with.
func (b *Backend) Config() Config { return b.cfg }

// Probe starts the agent once, in an empty temporary directory, to learn
// what it reports: its name and version at initialize, and the models and
// modes of a new session when it offers them. The process is stopped
// before Probe returns. Info reflects the result; an agent that cannot
// start is still listed, and its sessions fail with the reason.
//
// A Probe called while another is in progress waits for that one and
// returns its result.
func (b *Backend) Probe(ctx context.Context) error {
	b.mu.Lock()
	if ch := b.probing; ch != nil {
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.probed == nil {
			return errors.New("the probe in progress ended without a result")
		}
		return b.probed.err
	}
	ch := make(chan struct{})
	b.probing = ch
	b.mu.Unlock()
	res := &probeResult{}
	res.err = b.probe(ctx, res, b.opts.Credentials.get(b.cfg.Name))
	b.mu.Lock()
	b.probed = res
	b.probing = nil
	close(ch)
	b.mu.Unlock()
	return res.err
}

func (b *Backend) probe(ctx context.Context, res *probeResult, cred *credential) error {
	dir, err := os.MkdirTemp("", "ahpd-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, env := b.launch(cred)
	p, err := startProcess(cfg, dir, env, func(*process) acpsdk.Client { return &probeClient{res: res} }, b.log.With("probe", true), &b.opts)
	if err != nil {
		return err
	}
	defer func() {
		// Marked only now: a connection the agent breaks during the probe
		// is the probe's error.
		p.markStopping("probe done")
		p.terminate()
	}()
	err = p.handshake(ctx, cfg, b.clientInfo())
	// What initialize answered is kept even when authenticate failed: it
	// lists the authentication methods.
	res.init = p.init
	if err != nil {
		return err
	}
	mark := p.stderrMark()
	s, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		// Often an agent that wants to be authenticated first: sessions
		// will say so. Models and modes stay unknown.
		res.sessionErr = errorText(err) + p.stderrSince(mark)
		b.log.Info("probe: no session to learn models and modes from", "err", res.sessionErr)
		return nil
	}
	res.models, res.modes, res.options = s.Models, s.Modes, s.ConfigOptions
	return nil
}

// SessionError returns why the agent could not open a session when it was
// probed (often a missing login or API key), or "" when it could or has
// not been probed. Its sessions are expected to fail the same way.
func (b *Backend) SessionError() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probed == nil {
		return ""
	}
	return b.probed.sessionErr
}

func (b *Backend) clientInfo() acpsdk.Implementation {
	return acpsdk.Implementation{Name: b.opts.ClientName, Version: b.opts.ClientVersion}
}

// AuthMethods returns the ids of the authentication methods the agent
// advertised when probed (see Config.AuthMethod).
func (b *Backend) AuthMethods() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probed == nil {
		return nil
	}
	var ids []string
	for _, m := range b.probed.init.AuthMethods {
		ids = append(ids, authMethodID(m))
	}
	return ids
}

// Info describes the agent as the root state lists it.
func (b *Backend) Info() protocol.AgentInfo {
	b.mu.Lock()
	res := b.probed
	b.mu.Unlock()
	info := protocol.AgentInfo{
		Provider:    b.cfg.Name,
		DisplayName: b.cfg.DisplayName,
		Description: b.cfg.Description,
		Models:      []protocol.SessionModelInfo{},
		// Each chat of a session runs in an ACP session of its own.
		Capabilities: &protocol.AgentCapabilities{MultipleChats: &protocol.MultipleChatsCapability{}},
	}
	var impl *acpsdk.Implementation
	if res != nil && res.err == nil {
		impl = res.init.AgentInfo
	}
	if info.DisplayName == "" {
		switch {
		case impl != nil && impl.Title != nil && *impl.Title != "":
			info.DisplayName = *impl.Title
		case impl != nil && impl.Name != "":
			info.DisplayName = impl.Name
		default:
			info.DisplayName = b.cfg.Name
		}
	}
	state, why := b.state(res)
	if info.Description == "" {
		switch {
		case impl != nil:
			info.Description = "ACP agent " + impl.Name + " " + impl.Version
		default:
			info.Description = "ACP agent (" + b.cfg.Command + ")"
		}
	}
	switch state {
	case StateFailed:
		info.Description = "Failed: " + strings.TrimSuffix(why, ".") + ". " + info.Description
	case StateNeedsSignIn:
		info.Description = "Needs sign-in: " + strings.TrimSuffix(why, ".") + ". " + info.Description
	case StateUnknown:
		info.Description += " (not checked yet)"
	}
	if res != nil {
		info.Description += b.authDescription(res, state)
		info.ProtectedResources = b.protectedResources(res, state)
		switch mo := modelOption(res.options); {
		case res.models != nil && len(res.models.AvailableModels) > 0:
			info.Models = modelInfos(b.cfg.Name, res.models.AvailableModels)
		case mo != nil:
			// Models offered only as a config option count as models.
			info.Models = modelInfos(b.cfg.Name, optionModels(mo))
		}
		if res.modes != nil && len(res.modes.AvailableModes) > 0 {
			info.Customizations = []protocol.Customization{modesCustomization(res.modes.AvailableModes)}
		}
	}
	return info
}

// Open starts an agent process for the session, in the working directory
// the policy chooses, and creates the ACP session of its default chat.
func (b *Backend) Open(ctx context.Context, req agent.OpenRequest, host agent.Host) (agent.Session, error) {
	dir, err := b.workingDirectory(req.WorkingDirectory)
	if err != nil {
		return nil, err
	}
	s := newSession(b, req, host, dir)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the agent backend is closed")
	}
	b.sessions[s] = struct{}{}
	b.mu.Unlock()
	if err := s.open(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// forget drops a closed session.
func (b *Backend) forget(s *session) {
	b.mu.Lock()
	delete(b.sessions, s)
	b.mu.Unlock()
}

// Close stops the processes of every session still open.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	sessions := make([]*session, 0, len(b.sessions))
	for s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { s.Close() })
	}
	wg.Wait()
	b.hub.close()
	return nil
}

// workingDirectory applies the policy to the session's working directory
// (a file: URI, or "").
func (b *Backend) workingDirectory(uri string) (string, error) {
	wd := b.cfg.WorkingDirectory
	var dir string
	switch {
	case wd.Policy == PolicyFixed:
		dir = wd.Directory
	case uri != "":
		p, err := filePath(uri)
		if err != nil {
			return "", err
		}
		dir = p
	case wd.Policy == PolicyRequire:
		return "", fmt.Errorf("the %s agent needs a working directory: create the session with workingDirectories", b.cfg.Name)
	case wd.Directory != "":
		dir = wd.Directory
	default:
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = cwd
	}
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", dir)
	}
	return dir, nil
}

// filePath returns the local path of a file: URI.
func filePath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("working directory %q: want a file: URI on this machine", uri)
	}
	p, abs := fileuri.FromURIPath(u.Path)
	if !abs {
		return "", fmt.Errorf("working directory %q is not absolute", uri)
	}
	return p, nil
}

// fileURI returns the file: URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: fileuri.URIPath(path)}).String()
}

// modelInfos maps ACP models to AHP model descriptions.
func modelInfos(provider string, models []acpsdk.ModelInfo) []protocol.SessionModelInfo {
	out := make([]protocol.SessionModelInfo, 0, len(models))
	for _, m := range models {
		mi := protocol.SessionModelInfo{ID: string(m.ModelId), Provider: provider, Name: m.Name}
		if m.Description != nil && *m.Description != "" {
			mi.Meta = map[string]jsontext.Value{"description": jsonValue(*m.Description)}
		}
		out = append(out, mi)
	}
	return out
}

// jsonValue encodes v, which must be encodable.
func jsonValue(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		return jsontext.Value("null")
	}
	return jsontext.Value(b)
}

// probeClient serves the probe's agent: it refuses everything, and notes
// the sign-in status the agent reports.
type probeClient struct{ res *probeResult }

// authStatusMethod is the extension notification by which Claude Code and
// Codex report whom they are signed in as ("authStatus" in their
// capabilities' _meta); kind "none" means not signed in.
const authStatusMethod = "_auth/status_update"

func (c *probeClient) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method != authStatusMethod {
		return nil, acpsdk.NewMethodNotFound(method)
	}
	var p struct {
		AuthStatus struct {
			Kind  string `json:"kind"`
			Label string `json:"label"`
		} `json:"authStatus"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	c.res.authMu.Lock()
	c.res.authKind, c.res.authLabel = p.AuthStatus.Kind, p.AuthStatus.Label
	c.res.authMu.Unlock()
	return nil, nil
}

var errProbe = errors.New("the host is only probing this agent")

func (*probeClient) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errProbe
}
func (*probeClient) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errProbe
}
func (*probeClient) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
}
func (*probeClient) SessionUpdate(context.Context, acpsdk.SessionNotification) error { return nil }
func (*probeClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errProbe
}
func (*probeClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errProbe
}
func (*probeClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errProbe
}
func (*probeClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errProbe
}
func (*probeClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errProbe
}

// authDescription says what the root state's agent entry should tell a
// user about signing in to the agent: the authentication methods it
// offers while it needs sign-in (or when it failed), "" otherwise. The
// methods a client can use are also the entry's protectedResources (see
// protectedResources); the description names the others too.
func (b *Backend) authDescription(res *probeResult, state string) string {
	methods := res.init.AuthMethods
	if len(methods) == 0 || state == StateReady || state == StateUnknown {
		return ""
	}
	var out strings.Builder
	out.WriteString(" Sign-in methods it offers: ")
	for i, m := range methods {
		if i > 0 {
			out.WriteString("; ")
		}
		out.WriteString(authMethodText(m))
	}
	out.WriteString(".")
	return out.String()
}

// authMethodText describes an authentication method: its name, its id,
// and what it needs.
func authMethodText(m acpsdk.AuthMethod) string {
	var name, id string
	var desc *string
	var extra string
	switch {
	case m.Agent != nil:
		name, id, desc = m.Agent.Name, m.Agent.Id, m.Agent.Description
	case m.EnvVar != nil:
		name, id, desc = m.EnvVar.Name, m.EnvVar.Id, m.EnvVar.Description
		var vars []string
		for _, v := range m.EnvVar.Vars {
			if !v.Optional {
				vars = append(vars, v.Name)
			}
		}
		if len(vars) > 0 {
			extra = "a key for " + strings.Join(vars, ", ")
		}
		if m.EnvVar.Link != nil && *m.EnvVar.Link != "" {
			extra = strings.TrimPrefix(extra+"; see "+*m.EnvVar.Link, "; ")
		}
	case m.Terminal != nil:
		name, id, desc = m.Terminal.Name, m.Terminal.Id, m.Terminal.Description
		extra = "a login in a terminal"
	default:
		return "?"
	}
	text := name
	if text == "" || text == id {
		text = id
	} else {
		text += " (" + id + ")"
	}
	if desc != nil && strings.TrimSpace(*desc) != "" {
		text += ": " + strings.TrimSuffix(strings.TrimSpace(*desc), ".")
	}
	if extra != "" {
		text += " [" + extra + "]"
	}
	return text
}

// offeredAuth lists the ids of the authentication methods an agent offers,
// for an error message.
func offeredAuth(methods []acpsdk.AuthMethod) string {
	if len(methods) == 0 {
		return "it offers none"
	}
	ids := make([]string, len(methods))
	for i, m := range methods {
		ids[i] = strconv.Quote(authMethodID(m))
	}
	return "it offers " + strings.Join(ids, ", ")
}

// authMethodID returns the id of an advertised authentication method.
func authMethodID(m acpsdk.AuthMethod) string {
	switch {
	case m.Agent != nil:
		return m.Agent.Id
	case m.EnvVar != nil:
		return m.EnvVar.Id
	case m.Terminal != nil:
		return m.Terminal.Id
	}
	return "?"
}
