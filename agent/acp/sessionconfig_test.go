package acp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// dialAt connects a client that offers only the given protocol version.
func (th *testHost) dialAt(t testing.TB, clientID, version string) *client {
	t.Helper()
	c := &client{th.Server.Dial(t, clientID)}
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{version}, ClientID: clientID}, &res)
	return c
}

func errCode(err error) protocol.ErrorCode {
	var e *protocol.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// values renders configuration values as name=JSON, sorted.
func values(v map[string]jsontext.Value) string {
	var parts []string
	for name, x := range v {
		parts = append(parts, name+"="+string(x))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// TestSessionConfig goes through a session's configuration end to end over
// a real socket with the scripted ACP agent, which advertises two modes,
// two models and one config option: a client resolves the configuration
// and completes a property, creates a session with a value, changes the
// mode (the agent gets session/set_mode), and the agent's own changes
// (current_mode_update, config_option_update) reach a second client at an
// older protocol version.
func TestSessionConfig(t *testing.T) {
	b := newBackend(t, nil)
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	a := th.dialAt(t, "a", "1.1.0")

	// resolveSessionConfig: the schema of the agent's modes, models and
	// config options, with the defaults the agent reported; a value that
	// is not valid falls back to the default, an unknown name is echoed.
	var res protocol.ResolveSessionConfigResult
	a.Must("resolveSessionConfig", &protocol.ResolveSessionConfigParams{Provider: protocol.Ptr("test"),
		Config: map[string]jsontext.Value{"mode": sessionconfig.Value("code"), "effort": sessionconfig.Value("extreme"), "other": sessionconfig.Value(1)}}, &res)
	var names []string
	for name, p := range res.Schema.Properties {
		if p.SessionMutable == nil || !*p.SessionMutable {
			t.Errorf("property %s is not sessionMutable", name)
		}
		names = append(names, name+":"+string(p.Type)+":"+p.Title)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"effort:string:Effort", "mode:string:Mode", "model:string:Model"}, names); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	if got, want := values(res.Values), `effort="medium" mode="code" model="small" other=1`; got != want {
		t.Errorf("values %s, want %s", got, want)
	}
	if m := res.Schema.Properties["mode"]; len(m.Enum) != 2 || string(m.Enum[1]) != `"code"` || m.EnumLabels[0] != "Ask" || m.EnumDescriptions[0] != "Asks before every change" {
		t.Errorf("mode property %+v", m)
	}

	// sessionConfigCompletions filters a property's values.
	var comp protocol.SessionConfigCompletionsResult
	a.Must("sessionConfigCompletions", &protocol.SessionConfigCompletionsParams{Provider: protocol.Ptr("test"),
		Property: "model", Query: protocol.Ptr("LAR")}, &comp)
	if len(comp.Items) != 1 || comp.Items[0].Value != "large" || comp.Items[0].Label != "Large" || comp.Items[0].Description == nil || *comp.Items[0].Description != "The big one" {
		t.Errorf("completions %+v", comp.Items)
	}

	// Bad input gets clear errors.
	for _, tc := range []struct {
		method string
		params any
		code   protocol.ErrorCode
		text   string
	}{
		{"sessionConfigCompletions", &protocol.SessionConfigCompletionsParams{Property: "nope"}, protocol.CodeInvalidParams, `"nope"`},
		{"resolveSessionConfig", &protocol.ResolveSessionConfigParams{Provider: protocol.Ptr("nope")}, protocol.CodeProviderNotFound, `"nope"`},
		{"createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("bad"), Provider: protocol.Ptr("test"),
			Config: map[string]jsontext.Value{"mode": sessionconfig.Value("fly")}}, protocol.CodeInvalidParams, `"mode": "fly" is not one of "ask", "code"`},
		{"createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("bad"), Provider: protocol.Ptr("test"),
			Config: map[string]jsontext.Value{"effort": sessionconfig.Value(3)}}, protocol.CodeInvalidParams, `"effort": want a string, got a number`},
	} {
		err := a.Call(tc.method, tc.params, nil)
		if errCode(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v (code %d), want code %d mentioning %s", tc.method, err, errCode(err), tc.code, tc.text)
		}
	}

	// A session created with a value: its state holds the schema and the
	// resolved values, and the agent's ACP session was set to them.
	dir := t.TempDir()
	uri := protocol.SessionURI("s1")
	a.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("test"), WorkingDirectories: []string{"file://" + dir},
		Config: map[string]jsontext.Value{"effort": sessionconfig.Value("high")}}, nil)
	st := a.Subscribe(uri).State.(*protocol.SessionState)
	if st.Config == nil {
		t.Fatal("the session has no config")
	}
	if got, want := values(st.Config.Values), `effort="high" mode="ask" model="small"`; got != want {
		t.Errorf("session config %s, want %s", got, want)
	}
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		a.WaitFor("session ready", func(envs []protocol.ActionEnvelope) bool { return countType(envs, "session/ready") > 0 })
	}
	chat := *st.DefaultChat
	a.Subscribe(chat)
	state := func(c *client, turn string) string {
		t.Helper()
		c.startTurn(chat, turn, "state")
		c.waitTurnEnd(turn)
		return markdown(finishedTurn(t, th.chatState(t, chat), turn).ResponseParts)
	}
	if got, want := state(a, "t1"), "mode=ask model=small effort=high cwd="+dir; got != want {
		t.Errorf("agent state %q, want %q", got, want)
	}

	// A second client, at 0.8.0, watches the session.
	bc := th.dialAt(t, "b", "0.8.0")
	bsnap := bc.Subscribe(uri)
	bc.Subscribe(chat)

	// A client changes the mode and the model: every client sees it, and
	// the agent was switched (session/set_mode, session/set_model).
	a.Dispatch(uri, &protocol.SessionConfigChangedAction{Config: map[string]jsontext.Value{"mode": sessionconfig.Value("code"), "model": sessionconfig.Value("large")}})
	bc.WaitFor("the client's config change", func(envs []protocol.ActionEnvelope) bool {
		return configChange(envs, "mode", `"code"`, true)
	})
	if got, want := state(a, "t2"), "mode=code model=large effort=high cwd="+dir; got != want {
		t.Errorf("agent state after the change %q, want %q", got, want)
	}

	// The agent changes its mode and its effort: the second client hears
	// of both from the host.
	a.startTurn(chat, "t3", "mode ask\neffort low")
	a.waitTurnEnd("t3")
	envs := bc.WaitFor("the agent's config changes", func(envs []protocol.ActionEnvelope) bool {
		return configChange(envs, "mode", `"ask"`, false) && configChange(envs, "effort", `"low"`, false)
	})
	mirrored := bsnap.State
	for _, e := range envs {
		if e.Channel == uri && e.ServerSeq > bsnap.FromSeq && e.RejectionReason == nil {
			mirrored = reducer.Reducer{}.Apply(mirrored, e.Action)
		}
	}
	hostState := th.sessionState(t, uri)
	if got, want := values(mirrored.(*protocol.SessionState).Config.Values), `effort="low" mode="ask" model="large"`; got != want {
		t.Errorf("second client's mirror %s, want %s", got, want)
	}
	if got, want := values(hostState.Config.Values), `effort="low" mode="ask" model="large"`; got != want {
		t.Errorf("host's config %s, want %s", got, want)
	}

	// Changes the schema does not allow are rejected with a reason, and
	// nobody else sees them.
	for _, tc := range []struct {
		config map[string]jsontext.Value
		reason string
	}{
		{map[string]jsontext.Value{"mode": sessionconfig.Value("fly")}, `"fly" is not one of`},
		{map[string]jsontext.Value{"nope": sessionconfig.Value(true)}, `no property "nope"`},
		{map[string]jsontext.Value{"effort": sessionconfig.Value(false)}, "want a string"},
	} {
		seq := a.Dispatch(uri, &protocol.SessionConfigChangedAction{Config: tc.config})
		envs := a.WaitFor("a rejection", func(envs []protocol.ActionEnvelope) bool { return rejected(envs, "a", seq) != nil })
		if r := rejected(envs, "a", seq); !strings.Contains(*r, tc.reason) {
			t.Errorf("rejection %q, want it to mention %s", *r, tc.reason)
		}
	}
	if got := values(th.sessionState(t, uri).Config.Values); got != `effort="low" mode="ask" model="large"` {
		t.Errorf("config after rejected changes: %s", got)
	}
}

// configChange reports whether a session/configChanged set name to v, sent
// by a client (fromClient) or by the host.
func configChange(envs []protocol.ActionEnvelope, name, v string, fromClient bool) bool {
	for _, e := range envs {
		a, ok := e.Action.(*protocol.SessionConfigChangedAction)
		if !ok || e.RejectionReason != nil || (e.Origin != nil) != fromClient {
			continue
		}
		if string(a.Config[name]) == v {
			return true
		}
	}
	return false
}

func rejected(envs []protocol.ActionEnvelope, clientID string, seq int64) *string {
	for _, e := range envs {
		if e.Origin != nil && e.Origin.ClientID == clientID && e.Origin.ClientSeq == seq && e.RejectionReason != nil {
			return e.RejectionReason
		}
	}
	return nil
}

func countType(envs []protocol.ActionEnvelope, typ string) int {
	n := 0
	for _, e := range envs {
		if e.Action.Type() == typ {
			n++
		}
	}
	return n
}

// TestSessionConfigBeforeProbe: creating a session never starts the agent
// to learn its configuration (the session has none), while
// resolveSessionConfig probes an agent not probed yet, and sessions
// created after that get the schema.
func TestSessionConfigBeforeProbe(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dialAt(t, "a", "1.1.0")
	uri := protocol.SessionURI("early")
	a.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("test")}, nil)
	if st := a.Subscribe(uri).State.(*protocol.SessionState); st.Config != nil {
		t.Errorf("a session created before the probe has config %+v", st.Config)
	}
	var res protocol.ResolveSessionConfigResult
	a.Must("resolveSessionConfig", &protocol.ResolveSessionConfigParams{Provider: protocol.Ptr("test")}, &res)
	if got, want := values(res.Values), `effort="medium" mode="ask" model="small"`; got != want {
		t.Errorf("resolved %s, want %s", got, want)
	}
	uri = protocol.SessionURI("late")
	a.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("test")}, nil)
	if st := a.Subscribe(uri).State.(*protocol.SessionState); st.Config == nil || values(st.Config.Values) != `effort="medium" mode="ask" model="small"` {
		t.Errorf("a session created after the probe has config %+v", st.Config)
	}
}

// TestSessionConfigRefused: a change the host accepted and the agent
// refuses is put back, for every client, to the value the agent has.
func TestSessionConfigRefused(t *testing.T) {
	cfg := testConfig("test")
	cfg.Env[acptest.RefuseConfigEnv] = "model,effort"
	b, err := acp.New(cfg, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	a := th.dialAt(t, "a", "1.1.0")
	bc := th.dialAt(t, "b", "1.1.0")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	bc.join(sess)
	a.Dispatch(sess, &protocol.SessionConfigChangedAction{Config: map[string]jsontext.Value{
		"model": sessionconfig.Value("large"), "effort": sessionconfig.Value("low"), "mode": sessionconfig.Value("code")}})
	bc.WaitFor("the agent's values back", func(envs []protocol.ActionEnvelope) bool {
		return configChange(envs, "model", `"small"`, false) && configChange(envs, "effort", `"medium"`, false)
	})
	if got, want := values(th.sessionState(t, sess).Config.Values), `effort="medium" mode="code" model="small"`; got != want {
		t.Errorf("config %s, want %s", got, want)
	}
	a.startTurn(chat, "t1", "state")
	a.waitTurnEnd("t1")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts); !strings.HasPrefix(got, "mode=code model=small effort=medium ") {
		t.Errorf("agent state %q", got)
	}
}
