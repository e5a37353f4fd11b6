package acp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// keyAgent returns the backend of a test agent that needs the key (an
// env_var method "key") or the login (a terminal method "login" writing
// loginFile), keeping keys in credPath and logging into logs.
func keyAgent(t *testing.T, key, credPath, loginFile string, logs *lockedBuffer) *acp.Backend {
	t.Helper()
	cfg := testConfig("keyed")
	cfg.Env[acptest.AuthMethodsEnv] = "key"
	cfg.Env[acptest.RequireKeyEnv] = key
	if loginFile != "" {
		cfg.Env[acptest.LoginFileEnv] = loginFile
	}
	creds, err := acp.OpenCredentials(credPath)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := acp.New(cfg, &acp.Options{Logger: log, ExitGrace: testExitGrace, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// keyResource returns the resource of the agent's key method.
func keyResource(t *testing.T, info protocol.AgentInfo) (string, bool) {
	t.Helper()
	for _, r := range info.ProtectedResources {
		if strings.Contains(r.Resource, "/key/") {
			return r.Resource, r.Required == nil || *r.Required
		}
	}
	t.Fatalf("no key method in %+v", info.ProtectedResources)
	return "", false
}

// TestSignInWithKey: an agent that needs a key says so in its root entry;
// a client's authenticate with a wrong key is refused and changes
// nothing; with the right one the agent is ready, announced with
// root/agentsChanged, its sessions work, the key is kept in a file only
// its owner reads, survives a restart, and appears in no log and no
// message to a client.
func TestSignInWithKey(t *testing.T) {
	const key = "sk-test-5f2b9c1d7e"
	credPath := filepath.Join(t.TempDir(), "data", "credentials.json")
	var logs lockedBuffer
	b := keyAgent(t, key, credPath, "", &logs)
	if st, why := b.State(); st != acp.StateNeedsSignIn || !strings.Contains(why, "Authentication required") {
		t.Fatalf("state %s (%s), want needs-sign-in", st, why)
	}
	info := b.Info()
	res, required := keyResource(t, info)
	if !required || !strings.HasPrefix(info.Description, "Needs sign-in: ") {
		t.Fatalf("entry %+v: want a required key resource and the state in the description", info)
	}

	th := startHost(t, b)
	c := th.dial(t, "c")
	c.Subscribe(protocol.RootURI)
	var seen []string
	call := func(token string) error {
		err := c.Call("authenticate", &protocol.AuthenticateParams{Resource: res, Token: token}, nil)
		if err != nil {
			seen = append(seen, err.Error())
		}
		return err
	}
	var pe *protocol.Error
	if err := call("sk-wrong"); !errors.As(err, &pe) || pe.Code != protocol.CodeAuthRequired {
		t.Fatalf("a wrong key: %v, want AuthRequired", err)
	}
	if st, _ := b.State(); st != acp.StateNeedsSignIn {
		t.Fatalf("a wrong key changed the state to %s", st)
	}
	if _, err := os.Stat(credPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a wrong key was kept: %v", err)
	}
	if err := call(key); err != nil {
		t.Fatalf("the right key: %v", err)
	}
	c.WaitFor("the agent ready", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.RootAgentsChangedAction); ok && len(a.Agents) == 1 {
				_, req := keyResource(t, a.Agents[0])
				return !req && !strings.HasPrefix(a.Agents[0].Description, "Needs")
			}
		}
		return false
	})
	st, err := os.Stat(credPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, mode %v", err, st.Mode())
	}
	if data, _ := os.ReadFile(credPath); !strings.Contains(string(data), key) {
		t.Fatalf("the key is not in the credentials file: %s", data)
	}

	_, chat := c.newSession("s1", "keyed", t.TempDir())
	turn := c.startTurn(chat, "t1", "hello")
	if e := c.waitTurnEnd(turn); e.Action.Type() != "chat/turnComplete" {
		t.Fatalf("the turn ended with %s", e.Action.Type())
	}

	// What the client received, and what it can read now.
	for _, e := range c.Envelopes() {
		data, _ := json.Marshal(e)
		seen = append(seen, string(data))
	}
	for _, uri := range []string{protocol.RootURI, protocol.SessionURI("s1"), chat} {
		data, _ := json.Marshal(c.Subscribe(uri))
		seen = append(seen, string(data))
	}
	seen = append(seen, logs.String())
	// The agent printed both keys on stderr: the log has them masked.
	if l := logs.String(); !strings.Contains(l, "using the key [the key]") || !strings.Contains(l, `no valid API key (\"[the key]\")`) {
		t.Errorf("the agent's stderr lines are not in the log, masked:\n%s", l)
	}
	for _, s := range seen {
		if strings.Contains(s, key) || strings.Contains(s, "sk-wrong") {
			t.Fatalf("a key was logged or sent to a client: %s", s)
		}
	}

	// A restart: the key is read back.
	b2 := keyAgent(t, key, credPath, "", &logs)
	if st, why := b2.State(); st != acp.StateReady {
		t.Fatalf("after a restart: %s (%s)", st, why)
	}
	// Revoking forgets it.
	res2, _ := keyResource(t, b2.Info())
	th2 := startHost(t, b2)
	c2 := th2.dial(t, "c2")
	c2.Must("authenticate", &protocol.AuthenticateParams{Resource: res2, Token: ""}, nil)
	if st, _ := b2.State(); st != acp.StateNeedsSignIn {
		t.Fatalf("after revoking: %s", st)
	}
	if data, _ := os.ReadFile(credPath); strings.Contains(string(data), key) {
		t.Fatalf("the revoked key is still kept: %s", data)
	}
}

// TestSignInErrors: what authenticate refuses on an agent's resources.
func TestSignInErrors(t *testing.T) {
	var logs lockedBuffer
	b := keyAgent(t, "k", "", filepath.Join(t.TempDir(), "marker"), &logs)
	var login string
	for _, r := range b.Info().ProtectedResources {
		if strings.Contains(r.Resource, "/login/") {
			login = r.Resource
			if r.BearerMethodsSupported == nil || len(r.BearerMethodsSupported) != 0 {
				t.Errorf("login resource %+v: want no bearer methods", r)
			}
		}
	}
	if login == "" {
		t.Fatalf("no login method in %+v", b.Info().ProtectedResources)
	}
	res, _ := keyResource(t, b.Info())
	th := startHost(t, b)
	c := th.dial(t, "c")
	for _, tc := range []struct {
		name, resource, token string
		code                  protocol.ErrorCode
	}{
		{"a login takes no token", login, "x", protocol.CodeInvalidParams},
		{"an unknown resource", acp.ResourcePrefix + "keyed/key/nope", "x", protocol.CodeInvalidParams},
		{"a key with a newline", res, "a\nb", protocol.CodeInvalidParams},
		{"a key too long", res, strings.Repeat("k", 17<<10), protocol.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Call("authenticate", &protocol.AuthenticateParams{Resource: tc.resource, Token: tc.token}, nil)
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
		})
	}
}

// TestLoginCommand: a terminal method's login is the agent's command with
// the method's arguments and variables, in the agent's environment; once
// it has run, LoginEnded finds the agent ready.
func TestLoginCommand(t *testing.T) {
	var logs lockedBuffer
	marker := filepath.Join(t.TempDir(), "marker")
	b := keyAgent(t, "k", "", marker, &logs)
	var login string
	for _, r := range b.Info().ProtectedResources {
		if strings.Contains(r.Resource, "/login/") {
			login = r.Resource
		}
	}
	cmd, err := b.LoginCommand(login)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Command != os.Args[0] || !containsEnv(cmd.Env, acptest.LoginEnv+"=1") || !containsEnv(cmd.Env, acptest.LoginFileEnv+"="+marker) || !filepath.IsAbs(cmd.Dir) {
		t.Fatalf("login command %+v", cmd)
	}
	if st, _ := b.State(); st != acp.StateNeedsSignIn {
		t.Fatalf("state before the login: %s", st)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.LoginEnded(context.Background(), login); err != nil {
		t.Fatal(err)
	}
	if st, why := b.State(); st != acp.StateReady {
		t.Fatalf("state after the login: %s (%s)", st, why)
	}
	res, _ := keyResource(t, b.Info())
	if _, err := b.LoginCommand(res); err == nil {
		t.Fatal("a key method ran as a login")
	}
}

func containsEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

// TestLoginTerminal: a client runs the agent's login in a host terminal
// (createTerminal with the sign-in _meta key); when the login exits the
// agent is probed again, and the root state says it is ready before the
// terminal's exit is published. Terminals for anything but a login the
// agent lists, or claimed by anyone but the creating client, are refused.
func TestLoginTerminal(t *testing.T) {
	var logs lockedBuffer
	marker := filepath.Join(t.TempDir(), "marker")
	b := keyAgent(t, "k", "", marker, &logs)
	var login, key string
	for _, r := range b.Info().ProtectedResources {
		if strings.Contains(r.Resource, "/login/") {
			login = r.Resource
		} else {
			key = r.Resource
		}
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Workspace: workspace.New(&workspace.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	th := serve(t, h)
	c := th.dial(t, "c")
	meta := func(resource string) map[string]jsontext.Value {
		v, _ := json.Marshal(resource)
		return map[string]jsontext.Value{workspace.SignInMeta: v}
	}
	mine := &protocol.TerminalClientClaim{ClientID: "c"}
	for _, tc := range []struct {
		name  string
		meta  map[string]jsontext.Value
		claim protocol.TerminalClaim
	}{
		{"an unknown resource", meta(acp.ResourcePrefix + "keyed/login/nope"), mine},
		{"a key method", meta(key), mine},
		{"not a string", map[string]jsontext.Value{workspace.SignInMeta: jsontext.Value(`{}`)}, mine},
		{"another client's claim", meta(login), &protocol.TerminalClientClaim{ClientID: "other"}},
		{"a session's claim", meta(login), &protocol.TerminalSessionClaim{Session: protocol.SessionURI("s")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Call("createTerminal", &protocol.CreateTerminalParams{Channel: protocol.TerminalURI("bad"), Meta: tc.meta, Claim: tc.claim}, nil)
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Code != protocol.CodeInvalidParams {
				t.Fatalf("got %v, want InvalidParams", err)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a refused terminal ran the login")
	}

	c.Subscribe(protocol.RootURI)
	term := protocol.TerminalURI("login-1")
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: term, Meta: meta(login), Claim: mine}, nil)
	c.Subscribe(term)
	envs := c.WaitFor("the login's exit", hosttest.HasType("terminal/exited"))
	ready := -1
	for i, e := range envs {
		if a, ok := e.Action.(*protocol.RootAgentsChangedAction); ok && len(a.Agents) == 1 && !strings.HasPrefix(a.Agents[0].Description, "Needs") {
			ready = i
		}
		if _, ok := e.Action.(*protocol.TerminalExitedAction); ok && ready < 0 {
			t.Fatalf("the exit came before the agent was announced ready: %v", envs)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the login did not run: %v", err)
	}
	if st, why := b.State(); st != acp.StateReady {
		t.Fatalf("after the login: %s (%s)", st, why)
	}
}

// TestOpenCredentials: a missing file is no credentials; a file that is
// not JSON is an error naming it; a file others could read is made the
// owner's only.
func TestOpenCredentials(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		wantErr       bool
	}{
		{name: "missing"},
		{name: "garbage", content: "not json", mode: 0o600, wantErr: true},
		{name: "loose", content: `{"agents":{"x":{"method":"key","env":{"K":"v"}}}}`, mode: 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			_, err := acp.OpenCredentials(path)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Fatalf("got %v, want an error naming %s", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.content != "" {
				if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
					t.Fatalf("mode %v, want 0600", st.Mode().Perm())
				}
			}
		})
	}
}
