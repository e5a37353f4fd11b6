package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// Agent states, as Info reports them (see the package documentation).
const (
	// StateReady: the agent opened a session when last probed.
	StateReady = "ready"
	// StateNeedsSignIn: the agent started but could not open a session
	// (or refused the method ahpd signs in with), and it offers sign-in
	// methods.
	StateNeedsSignIn = "needs-sign-in"
	// StateFailed: the agent did not start, or cannot open a session and
	// offers no way to sign in.
	StateFailed = "failed"
	// StateUnknown: the agent has not been probed yet.
	StateUnknown = "unknown"
)

// ResourcePrefix starts the protected resource identifier of every sign-in
// method ahpd lists: ResourcePrefix + agent + "/key/" or "/login/" +
// method id (path-escaped). The host is in the reserved .invalid domain:
// nothing is ever fetched from it.
const ResourcePrefix = "https://ahpd.invalid/agents/"

// Sign-in kinds of a method.
const (
	kindKey   = "key"
	kindLogin = "login"
)

// signInMethod is an ACP authentication method a client can use through
// ahpd: a key it sends with authenticate, or a login command run in a
// terminal.
type signInMethod struct {
	id, name, desc, link string
	kind                 string
	// Key methods: the variable the key goes in, and whether ACP
	// authenticate is sent with the method's id after initialize.
	envVar       string
	authenticate bool
	// Login methods: the command, its arguments and added variables.
	command string
	args    []string
	env     map[string]string
}

// apiKeyVars maps the provider of an agent method's "api-key" hint (in
// its _meta, as Codex and Gemini CLI advertise) to the variable these
// agents read the key from.
var apiKeyVars = map[string]string{
	"openai":    "OPENAI_API_KEY",
	"google":    "GEMINI_API_KEY",
	"anthropic": "ANTHROPIC_API_KEY",
}

// signInMethods returns the methods of an agent's advertised ones that a
// client can use through ahpd.
func (c *Config) signInMethods(methods []acpsdk.AuthMethod) []signInMethod {
	var out []signInMethod
	for _, m := range methods {
		switch {
		case m.EnvVar != nil:
			var v string
			for _, ev := range m.EnvVar.Vars {
				if !ev.Optional {
					v = ev.Name
					break
				}
			}
			if v == "" && len(m.EnvVar.Vars) > 0 {
				v = m.EnvVar.Vars[0].Name
			}
			if v == "" {
				continue
			}
			out = append(out, signInMethod{id: m.EnvVar.Id, name: m.EnvVar.Name, desc: deref(m.EnvVar.Description), link: deref(m.EnvVar.Link),
				kind: kindKey, envVar: v, authenticate: true})
		case m.Terminal != nil:
			sm := signInMethod{id: m.Terminal.Id, name: m.Terminal.Name, desc: deref(m.Terminal.Description), kind: kindLogin,
				command: c.Command, args: m.Terminal.Args, env: stringMap(m.Terminal.Env)}
			out = append(out, sm)
		case m.Agent != nil:
			sm := signInMethod{id: m.Agent.Id, name: m.Agent.Name, desc: deref(m.Agent.Description)}
			if hint, ok := m.Agent.Meta["api-key"].(map[string]any); ok {
				if p, _ := hint["provider"].(string); apiKeyVars[p] != "" {
					sm.kind, sm.envVar, sm.authenticate = kindKey, apiKeyVars[p], true
				}
			}
			if cmd := c.LoginCommands[sm.id]; sm.kind == "" && len(cmd) > 0 {
				sm.kind, sm.command, sm.args = kindLogin, cmd[0], cmd[1:]
			}
			if sm.kind == "" {
				if ta, ok := m.Agent.Meta["terminal-auth"].(map[string]any); ok {
					if cmd, _ := ta["command"].(string); cmd != "" {
						sm.kind, sm.command, sm.args = kindLogin, cmd, anyStrings(ta["args"])
					}
				}
			}
			if sm.kind != "" {
				out = append(out, sm)
			}
		}
	}
	return out
}

func stringMap(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// resource is the protected resource identifier of a method of the agent.
func (b *Backend) resource(m signInMethod) string {
	return ResourcePrefix + url.PathEscape(b.cfg.Name) + "/" + m.kind + "/" + url.PathEscape(m.id)
}

// method finds the sign-in method a resource names among those the agent
// advertised when last probed.
func (b *Backend) method(resource string) (signInMethod, error) {
	b.mu.Lock()
	res := b.probed
	b.mu.Unlock()
	if res != nil {
		for _, m := range b.cfg.signInMethods(res.init.AuthMethods) {
			if b.resource(m) == resource {
				return m, nil
			}
		}
	}
	return signInMethod{}, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("agent %s offers no sign-in method %q", b.cfg.Name, resource)}
}

// state says whether a probe found the agent ready, needing sign-in or
// failed, and why.
func (b *Backend) state(res *probeResult) (string, string) {
	switch {
	case res == nil:
		return StateUnknown, ""
	case res.err != nil:
		// An agent that answered initialize and then refused
		// authenticate is one to sign in again.
		if res.init.ProtocolVersion != 0 && len(b.cfg.signInMethods(res.init.AuthMethods)) > 0 {
			return StateNeedsSignIn, res.err.Error()
		}
		return StateFailed, res.err.Error()
	case res.sessionErr != "":
		if len(b.cfg.signInMethods(res.init.AuthMethods)) > 0 {
			return StateNeedsSignIn, res.sessionErr
		}
		return StateFailed, res.sessionErr
	}
	res.authMu.Lock()
	kind, label := res.authKind, res.authLabel
	res.authMu.Unlock()
	if kind == "none" && len(b.cfg.signInMethods(res.init.AuthMethods)) > 0 {
		// It opens sessions but says it is not signed in (Claude Code):
		// its turns would fail.
		if label == "" {
			label = "Not signed in"
		}
		return StateNeedsSignIn, label
	}
	return StateReady, ""
}

// State reports the agent's state (StateReady, StateNeedsSignIn,
// StateFailed or StateUnknown) and, unless ready, why.
func (b *Backend) State() (state, reason string) {
	b.mu.Lock()
	res := b.probed
	b.mu.Unlock()
	return b.state(res)
}

// protectedResources lists the agent's sign-in methods as AHP protected
// resources: required while the agent needs sign-in. Login methods accept
// no bearer token (an empty bearer_methods_supported): they are started
// by creating a terminal for the resource.
func (b *Backend) protectedResources(res *probeResult, state string) []protocol.ProtectedResourceMetadata {
	if res == nil {
		return nil
	}
	var out []protocol.ProtectedResourceMetadata
	for _, m := range b.cfg.signInMethods(res.init.AuthMethods) {
		name := m.name
		if name == "" {
			name = m.id
		}
		if m.kind == kindKey {
			name += " (" + m.envVar + ")"
		}
		r := protocol.ProtectedResourceMetadata{
			Resource:     b.resource(m),
			ResourceName: protocol.Ptr(name),
			Required:     protocol.Ptr(state == StateNeedsSignIn),
		}
		if m.link != "" {
			r.ResourceDocumentation = protocol.Ptr(m.link)
		}
		if m.kind == kindLogin {
			r.BearerMethodsSupported = []string{}
		}
		out = append(out, r)
	}
	return out
}

// credential is what a client signed an agent in with: variables of the
// agent's environment, and the method ACP authenticate names.
type credential struct {
	Method       string            `json:"method"`
	Env          map[string]string `json:"env"`
	Authenticate bool              `json:"authenticate,omitempty"`
}

// Credentials keeps the keys clients gave agents, in a JSON file only its
// owner may read (mode 0600), so that they survive a restart. Share one
// among the backends (Options.Credentials). Its methods are safe for
// concurrent use.
type Credentials struct {
	path string
	mu   sync.Mutex
	m    map[string]*credential
}

// OpenCredentials reads the credentials kept at path, if the file exists;
// an empty path keeps them in memory only.
func OpenCredentials(path string) (*Credentials, error) {
	c := &Credentials{path: path, m: map[string]*credential{}}
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	var f struct {
		Agents map[string]*credential `json:"agents"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	for k, v := range f.Agents {
		if v != nil {
			c.m[k] = v
		}
	}
	// A file made looser by hand is tightened.
	if st, err := os.Stat(path); err == nil && st.Mode().Perm() != 0o600 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
	}
	return c, nil
}

func (c *Credentials) get(name string) *credential {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

// set keeps cred for the agent (nil forgets it) and writes the file.
func (c *Credentials) set(name string, cred *credential) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cred == nil {
		delete(c.m, name)
	} else {
		c.m[name] = cred
	}
	if c.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(map[string]any{"agents": c.m}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".credentials-*")
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; say so anyway.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}

// launch returns the configuration and environment an agent process
// starts with: the configured ones, with the credential a client signed
// the agent in with (its variables, and its method for authenticate).
func (b *Backend) launch(cred *credential) (*Config, []string) {
	cfg := b.cfg
	env := cfg.environ(b.opts.Environ)
	if cred == nil {
		return &cfg, env
	}
	if cred.Authenticate && cred.Method != "" {
		cfg.AuthMethod = cred.Method
	}
	env = slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, over := cred.Env[k]
		return over
	})
	for k, v := range cred.Env {
		env = append(env, k+"="+v)
		if len(v) >= 4 {
			cfg.secrets = append(cfg.secrets, v)
		}
	}
	return &cfg, env
}

// maxKeyBytes bounds a key a client sends.
const maxKeyBytes = 16 << 10

// Authenticate implements agent.Authenticator for the key methods Info
// lists: the key goes into the agent's environment under the method's
// variable (and ACP authenticate names the method after initialize), the
// agent is probed again with it, and only a key with which it opens a
// session is kept (in Options.Credentials). An empty token forgets the
// key and probes the agent again. The key is never logged.
func (b *Backend) Authenticate(ctx context.Context, req agent.AuthRequest) error {
	m, err := b.method(req.Resource)
	if err != nil {
		return err
	}
	if m.kind != kindKey {
		return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%q is a login that runs in a terminal: create a terminal for it (see ahpd's docs/agents.md), it takes no token", req.Resource)}
	}
	if req.Token == "" {
		if err := b.opts.Credentials.set(b.cfg.Name, nil); err != nil {
			return err
		}
		b.reprobe(ctx, nil, false)
		return nil
	}
	if len(req.Token) > maxKeyBytes || strings.ContainsFunc(req.Token, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return &protocol.Error{Code: protocol.CodeInvalidParams, Message: "the key must be at most 16 KiB of printable characters"}
	}
	cred := &credential{Method: m.id, Env: map[string]string{m.envVar: req.Token}, Authenticate: m.authenticate}
	ctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
	defer cancel()
	res := b.reprobe(ctx, cred, true)
	if st, why := b.state(res); st != StateReady {
		why = strings.ReplaceAll(why, req.Token, "[the key]")
		return &protocol.Error{Code: protocol.CodeAuthRequired, Message: fmt.Sprintf("agent %s did not accept the key: %s", b.cfg.Name, why)}
	}
	if err := b.opts.Credentials.set(b.cfg.Name, cred); err != nil {
		return err
	}
	b.commitProbe(res)
	b.log.Info("agent signed in with a key", "method", m.id, "client", req.ClientID)
	return nil
}

// LoginCommand implements agent.Loginer: the login method's command, in
// the agent's environment, run in its HOME.
func (b *Backend) LoginCommand(resource string) (agent.LoginCommand, error) {
	m, err := b.method(resource)
	if err != nil {
		return agent.LoginCommand{}, err
	}
	if m.kind != kindLogin {
		return agent.LoginCommand{}, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%q takes a key with authenticate; it runs no login", resource)}
	}
	_, env := b.launch(b.opts.Credentials.get(b.cfg.Name))
	for k, v := range m.env {
		env = append(env, k+"="+v)
	}
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			dir = v
		}
	}
	if st, err := os.Stat(dir); dir == "" || !filepath.IsAbs(dir) || err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	title := m.name
	if title == "" {
		title = m.id
	}
	return agent.LoginCommand{Title: "Sign in to " + b.cfg.Name + ": " + title, Command: m.command, Args: m.args, Env: env, Dir: dir}, nil
}

// LoginEnded implements agent.Loginer: the agent is probed again.
func (b *Backend) LoginEnded(ctx context.Context, resource string) error {
	res := b.reprobe(ctx, nil, false)
	st, why := b.state(res)
	b.log.Info("login ended; agent probed again", "resource", resource, "state", st, "reason", why)
	return nil
}

// reprobe probes the agent again once no other probe runs: with cred when
// override is set (the result is then only returned, for the caller to
// commit), else with the stored credential (the result is committed).
func (b *Backend) reprobe(ctx context.Context, cred *credential, override bool) *probeResult {
	for {
		b.mu.Lock()
		ch := b.probing
		if ch == nil {
			ch = make(chan struct{})
			b.probing = ch
			b.mu.Unlock()
			break
		}
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return &probeResult{err: ctx.Err()}
		}
	}
	if !override {
		cred = b.opts.Credentials.get(b.cfg.Name)
	}
	res := &probeResult{}
	res.err = b.probe(ctx, res, cred)
	b.mu.Lock()
	if !override {
		b.probed = res
	}
	close(b.probing)
	b.probing = nil
	b.mu.Unlock()
	return res
}

// commitProbe makes res the agent's last probe result.
func (b *Backend) commitProbe(res *probeResult) {
	b.mu.Lock()
	b.probed = res
	b.mu.Unlock()
}
