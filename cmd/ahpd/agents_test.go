package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/internal/tsagent"
	"github.com/ahp-go/ahp/protocol"
)

// TestMain lets this test binary also serve as the scripted ACP agent.
func TestMain(m *testing.M) {
	acptest.ServeIfAsked()
	os.Exit(m.Run())
}

func TestAgentFlagsAndFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ahpd.json")
	os.WriteFile(file, []byte(`{
		"agents": [
			{"name": "gemini", "command": "gemini", "args": ["--acp"], "env": {"GEMINI_API_KEY": "${MY_KEY}"},
			 "workingDirectory": {"policy": "require"}, "cancelTimeout": "20s"},
			{"name": "claude", "displayName": "Claude Code", "command": "claude-code-acp"}
		],
		"defaultAgent": "claude"
	}`), 0o600)
	cfg, err := parseConfig([]string{"--config", file, "--agent", `gemini=/opt/gemini --acp --model 'gemini 2'`, "--agent", "codex=codex-acp"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range cfg.Agents {
		got = append(got, a.Name+":"+a.Command+":"+strings.Join(a.Args, "|"))
	}
	want := []string{"gemini:/opt/gemini:--acp|--model|gemini 2", "claude:claude-code-acp:", "codex:codex-acp:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("agents %v, want %v", got, want)
	}
	if cfg.DefaultAgent != "claude" || cfg.DisableEcho {
		t.Errorf("config %+v", cfg.agentConfig)
	}

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--agent", "noequals"}, "NAME=COMMAND"},
		{[]string{"--agent", "a="}, "no command"},
		{[]string{"--agent", "bad name=x"}, "letters, digits"},
		{[]string{"--agent", "echo=x"}, `two agents are named "echo"`},
		{[]string{"--agent", "a=x", "--agent", "b='unterminated"}, "unterminated"},
		{[]string{"--no-echo"}, "no agents"},
		{[]string{"--default-agent", "nope"}, "not one of the agents"},
	} {
		_, err := parseConfig(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.err)
		}
	}
	if _, err := parseConfig([]string{"--agent", "echo=x", "--no-echo"}, io.Discard); err != nil {
		t.Errorf("an agent may be called echo when the built-in one is off: %v", err)
	}
	os.WriteFile(file, []byte(`{"agents": [{"name": "a", "command": "x", "workingDirectory": {"policy": "fixed"}}]}`), 0o600)
	if _, err := parseConfig([]string{"--config", file}, io.Discard); err == nil || !strings.Contains(err.Error(), "needs a directory") {
		t.Errorf("fixed policy without a directory: %v", err)
	}
	os.WriteFile(file, []byte(`{"agents": [{"name": "a", "comand": "x"}]}`), 0o600)
	if _, err := parseConfig([]string{"--config", file}, io.Discard); err == nil {
		t.Error("an unknown agent key was accepted")
	}
}

// TestRunACPAgent runs ahpd with an ACP agent given by flag (this test
// binary playing the scripted agent) and drives a turn from two clients.
func TestRunACPAgent(t *testing.T) {
	t.Setenv(acptest.AgentEnv, "1")
	url := runAhpd(t, "--store", "memory", "--agent", "test="+os.Args[0]+" -test.run=^$")

	a := dialClient(t, url, "a")
	b := dialClient(t, url, "b")
	var init protocol.InitializeResult
	a.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "a", InitialSubscriptions: []string{protocol.RootURI}}, &init)
	root := probedAgents(t, a, init.Snapshots[0].State.(*protocol.RootState).Agents, "ACP test agent")
	if len(root) != 2 || root[0].Provider != "test" || root[0].DisplayName != "ACP test agent" || root[1].Provider != "echo" {
		t.Fatalf("agents %+v", root)
	}
	b.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "b"}, nil)

	sess := protocol.SessionURI("s1")
	// No provider: the ACP agent is the default.
	a.call(t, "createSession", &protocol.CreateSessionParams{Channel: sess, WorkingDirectories: []string{"file://" + t.TempDir()}}, nil)
	var sub protocol.SubscribeResult
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: sess}, &sub)
	st := sub.Snapshot.State.(*protocol.SessionState)
	if st.Provider != "test" {
		t.Fatalf("provider %q", st.Provider)
	}
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		a.waitFor(t, "session ready", func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "session/ready" })
	}
	chat := *st.DefaultChat
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil)
	b.call(t, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil)
	a.notify(t, chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()),
		Message: protocol.Message{Text: "hello there", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	for _, c := range []*rawClient{a, b} {
		c.waitFor(t, "turn complete", func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "chat/turnComplete" })
	}
	text := func(c *rawClient) string {
		var s strings.Builder
		for _, e := range c.all() {
			switch x := e.Action.(type) {
			case *protocol.ChatResponsePartAction:
				if md, ok := x.Part.(*protocol.MarkdownResponsePart); ok {
					s.WriteString(md.Content.String())
				}
			case *protocol.ChatDeltaAction:
				s.WriteString(x.Content)
			}
		}
		return s.String()
	}
	if ta, tb := text(a), text(b); ta != "You said: hello there" || tb != ta {
		t.Errorf("replies %q and %q", ta, tb)
	}
}

// rawClient is the shared bare test client with the calling conventions
// of these tests.
type rawClient struct{ *hosttest.Client }

func dialClient(t *testing.T, url, id string) *rawClient {
	return &rawClient{hosttest.Dial(t, url, id)}
}

func (c *rawClient) call(t *testing.T, method string, params, result any) {
	t.Helper()
	c.Must(method, params, result)
}

func (c *rawClient) notify(t *testing.T, channel string, a protocol.StateAction) {
	t.Helper()
	c.Dispatch(channel, a)
}

func (c *rawClient) all() []protocol.ActionEnvelope { return c.Envelopes() }

// waitFor waits for one envelope that matches.
func (c *rawClient) waitFor(t *testing.T, what string, match func(protocol.ActionEnvelope) bool) {
	t.Helper()
	c.WaitFor(what, func(envs []protocol.ActionEnvelope) bool { return slices.ContainsFunc(envs, match) })
}

// TestRunTypeScriptExampleAgent runs ahpd with the example agent of the
// TypeScript ACP SDK (see agent/acp's interop test for the details): a
// full turn whose permission request a second client answers, then a
// cancelled turn.
func TestRunTypeScriptExampleAgent(t *testing.T) {
	node, script := tsagent.Find(t)
	url := runAhpd(t, "--store", "memory", "--agent", "example="+node+" '"+script+"'")

	a := dialClient(t, url, "a")
	b := dialClient(t, url, "b")
	a.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "a"}, nil)
	b.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "b"}, nil)
	sess := protocol.SessionURI("s1")
	a.call(t, "createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("example"), WorkingDirectories: []string{"file://" + t.TempDir()}}, nil)
	var sub protocol.SubscribeResult
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: sess}, &sub)
	st := sub.Snapshot.State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		a.waitFor(t, "session ready", func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "session/ready" })
	}
	chat := *st.DefaultChat
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil)
	b.call(t, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil)
	start := func(id string) {
		a.notify(t, chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()),
			Message: protocol.Message{Text: "go", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	}
	ended := func(id, typ string) func(protocol.ActionEnvelope) bool {
		return func(e protocol.ActionEnvelope) bool {
			switch x := e.Action.(type) {
			case *protocol.ChatTurnCompleteAction:
				return x.TurnID == id && typ == e.Action.Type()
			case *protocol.ChatTurnCancelledAction:
				return x.TurnID == id && typ == e.Action.Type()
			}
			return false
		}
	}

	start("t1")
	var ready *protocol.ChatToolCallReadyAction
	b.waitFor(t, "the permission request", func(e protocol.ActionEnvelope) bool {
		r, ok := e.Action.(*protocol.ChatToolCallReadyAction)
		if ok && r.Confirmed == nil {
			ready = r
		}
		return ok && r.Confirmed == nil
	})
	b.notify(t, chat, &protocol.ChatToolCallConfirmedAction{TurnID: "t1", ToolCallID: ready.ToolCallID, Approved: true, SelectedOptionID: protocol.Ptr("allow")})
	a.waitFor(t, "the first turn", ended("t1", "chat/turnComplete"))
	b.waitFor(t, "the first turn", ended("t1", "chat/turnComplete"))

	start("t2")
	a.waitFor(t, "the second turn streaming", func(e protocol.ActionEnvelope) bool {
		r, ok := e.Action.(*protocol.ChatResponsePartAction)
		return ok && r.TurnID == "t2"
	})
	b.notify(t, chat, &protocol.ChatTurnCancelledAction{TurnID: "t2"})
	a.waitFor(t, "the cancelled turn", ended("t2", "chat/turnCancelled"))
	a.waitFor(t, "the agent to stop", func(e protocol.ActionEnvelope) bool {
		x, ok := e.Action.(*protocol.ChatActivityChangedAction)
		return ok && x.Activity == nil
	})
}

// runAhpd runs ahpd in-process on a free loopback port with args, returns
// the URL it printed, and stops it when the test ends.
func runAhpd(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "error"}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("ahpd did not stop")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimPrefix(strings.TrimSpace(line), "ahpd listening on ")
}

// TestCheckAgentCommands: --check refuses an agent whose command does not
// exist, and accepts one that does.
func TestCheckAgentCommands(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), []string{"--check", "--agent", "ok=sh -c true", "--agent", "gone=/nonexistent/agent --acp"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "agent gone") || !strings.Contains(err.Error(), "/nonexistent/agent") {
		t.Fatalf("--check with a missing command: %v (%q)", err, out.String())
	}
	err = run(context.Background(), []string{"--check", "--agent", "nope=no-such-agent-command"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no-such-agent-command") {
		t.Fatalf("--check with a command not on PATH: %v", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--check", "--agent", "ok=sh -c true"}, &out, io.Discard); err != nil || out.String() != "configuration ok\n" {
		t.Fatalf("--check with a good command: %v %q", err, out.String())
	}
}

// probedAgents returns the root state's agents once one of them is listed
// as displayName: at once when the snapshot has it, else from the
// root/agentsChanged that publishes the agent's probe.
func probedAgents(t *testing.T, c *rawClient, agents []protocol.AgentInfo, displayName string) []protocol.AgentInfo {
	t.Helper()
	has := func(agents []protocol.AgentInfo) bool {
		return slices.ContainsFunc(agents, func(a protocol.AgentInfo) bool { return a.DisplayName == displayName })
	}
	if has(agents) {
		return agents
	}
	c.waitFor(t, "the agent's probe", func(e protocol.ActionEnvelope) bool {
		if x, ok := e.Action.(*protocol.RootAgentsChangedAction); ok && has(x.Agents) {
			agents = x.Agents
			return true
		}
		return false
	})
	return agents
}

// TestListensBeforeProbes: ahpd listens at once, even with an agent that
// never answers its probe; the echo agent serves meanwhile, and each ACP
// agent is published with root/agentsChanged when its probe ends.
func TestListensBeforeProbes(t *testing.T) {
	t.Setenv(acptest.AgentEnv, "1")
	start := time.Now()
	url := runAhpd(t, "--store", "memory", "--agent", "hung=sh -c 'exec sleep 600'", "--agent", "test="+os.Args[0]+" -test.run=^$")
	// The hung agent's probe cannot end before probeTimeout: listening
	// sooner is listening before it, however slow the machine is.
	if d := time.Since(start); d >= probeTimeout {
		t.Fatalf("ahpd took %v to listen, as long as a probe may last (%v)", d, probeTimeout)
	}
	a := dialClient(t, url, "a")
	var init protocol.InitializeResult
	a.call(t, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "a", InitialSubscriptions: []string{protocol.RootURI}}, &init)
	agents := init.Snapshots[0].State.(*protocol.RootState).Agents
	if len(agents) != 3 || agents[0].Provider != "hung" || agents[1].Provider != "test" || agents[2].Provider != "echo" {
		t.Fatalf("agents before the probes: %+v", agents)
	}

	// The echo agent works while the hung agent's probe waits.
	sess := protocol.SessionURI("s1")
	a.call(t, "createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("echo")}, nil)
	var sub protocol.SubscribeResult
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: sess}, &sub)
	st := sub.Snapshot.State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		a.waitFor(t, "session ready", func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "session/ready" })
	}
	chat := *st.DefaultChat
	a.call(t, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil)
	a.notify(t, chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()),
		Message: protocol.Message{Text: "hi", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	a.waitFor(t, "the echo turn", func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "chat/turnComplete" })

	agents = probedAgents(t, a, agents, "ACP test agent")
	if len(agents) != 3 || agents[0].Provider != "hung" || agents[1].Models == nil || len(agents[1].Models) != 2 {
		t.Errorf("agents after the test agent's probe: %+v", agents)
	}
}

// TestProbeLogs: the probe says an agent is ready only when it could open
// a session; one that cannot gets a warning in its own words, and no
// probe blames the agent for the connection the probe closes.
func TestProbeLogs(t *testing.T) {
	for _, tc := range []struct {
		name, fail, key string
		want            []string
		not             []string
	}{
		{name: "ready", want: []string{`level=INFO msg="ACP agent ready" agent=test`}, not: []string{"level=WARN"}},
		{name: "no session", fail: "Invalid API key · Please run /login",
			want: []string{`level=WARN msg="ACP agent started but cannot open a session`, "Invalid API key · Please run /login"},
			not:  []string{"ACP agent ready", "broke its ACP connection"}},
		{name: "needs sign-in", key: "sk-1",
			want: []string{`level=WARN msg="ACP agent needs sign-in`, "Authentication required"},
			not:  []string{"ACP agent ready", "broke its ACP connection"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{acptest.AgentEnv: "1"}
			if tc.fail != "" {
				env[acptest.FailSessionEnv] = tc.fail
			}
			if tc.key != "" {
				env[acptest.RequireKeyEnv] = tc.key
				env[acptest.AuthMethodsEnv] = "key"
			}
			b, err := acp.New(acp.Config{Name: "test", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: env}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf strings.Builder
			log := slog.New(slog.NewTextHandler(&buf, nil))
			// The probe returns once its process has exited.
			probeAgents(t.Context(), []*acp.Backend{b}, log, func() {})
			b.Close()
			got := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("log has %q:\n%s", n, got)
				}
			}
		})
	}
}
