package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// configAgent is the echo agent with a configuration schema. It records
// the configuration each session opened with and every change it heard
// of.
type configAgent struct {
	*echo.Backend
	mu      sync.Mutex
	opened  []map[string]jsontext.Value
	changes []map[string]jsontext.Value
	heard   chan struct{}
}

func newConfigAgent() *configAgent {
	return &configAgent{Backend: echo.New(&echo.Options{WordDelay: -1}), heard: make(chan struct{}, 16)}
}

func (a *configAgent) SessionConfigSchema(context.Context, agent.ConfigRequest) (*protocol.SessionConfigSchema, error) {
	return &protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{
		"mode":      {Type: "string", Title: "Mode", Enum: []protocol.JSONPrimitive{protocol.JSONPrimitive(`"ask"`), protocol.JSONPrimitive(`"code"`)}, Default: sessionconfig.Value("ask"), SessionMutable: protocol.Ptr(true)},
		"isolation": {Type: "string", Title: "Isolation", Enum: []protocol.JSONPrimitive{protocol.JSONPrimitive(`"folder"`), protocol.JSONPrimitive(`"worktree"`)}, Default: sessionconfig.Value("folder")},
	}}, nil
}

func (a *configAgent) Open(ctx context.Context, req agent.OpenRequest, h agent.Host) (agent.Session, error) {
	s, err := a.Backend.Open(ctx, req, h)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.opened = append(a.opened, req.Config)
	a.mu.Unlock()
	return &configSession{Session: s, a: a}, nil
}

type configSession struct {
	agent.Session
	a *configAgent
}

func (s *configSession) Handle(ev agent.Event) {
	if c, ok := ev.Action.(*protocol.SessionConfigChangedAction); ok {
		s.a.mu.Lock()
		s.a.changes = append(s.a.changes, c.Config)
		s.a.mu.Unlock()
		s.a.heard <- struct{}{}
	}
	s.Session.Handle(ev)
}

func renderValues(v map[string]jsontext.Value) string {
	var b strings.Builder
	for _, k := range []string{"isolation", "mode", "other"} {
		if x, ok := v[k]; ok {
			b.WriteString(k + "=" + string(x) + " ")
		}
	}
	return strings.TrimSpace(b.String())
}

// TestSessionConfigFromAgent: createSession resolves the client's values
// against the agent's schema into the session's state and the agent's
// OpenRequest; session/configChanged reaches the agent only when the
// schema allows it (SessionConfigChangedAction: only sessionMutable
// properties may change); a restarted host opens the session with the
// configuration it had.
func TestSessionConfigFromAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		t.Cleanup(func() { st.Close() })
		ag := newConfigAgent()
		th := startPipeHost(t, &host.Options{Store: st, Agents: []agent.Backend{ag}})
		c := th.dial(t, "a")
		c.initialize()

		err := c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("bad"), Config: map[string]jsontext.Value{"isolation": sessionconfig.Value("cloud")}}, nil)
		if rpcCode(err) != protocol.CodeInvalidParams || !strings.Contains(err.Error(), `"isolation": "cloud" is not one of`) {
			t.Fatalf("createSession with a bad value: %v", err)
		}

		uri := protocol.SessionURI("s")
		c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Config: map[string]jsontext.Value{"isolation": sessionconfig.Value("worktree"), "other": sessionconfig.Value(1)}}, nil)
		snap := c.Subscribe(uri)
		state := snap.State.(*protocol.SessionState)
		if state.Config == nil || renderValues(state.Config.Values) != `isolation="worktree" mode="ask" other=1` || len(state.Config.Schema.Properties) != 2 {
			t.Fatalf("session config %+v", state.Config)
		}
		if state.Lifecycle == protocol.SessionLifecycleCreating {
			c.WaitFor("ready", hasType("session/ready"))
		}
		ag.mu.Lock()
		if len(ag.opened) != 1 || renderValues(ag.opened[0]) != `isolation="worktree" mode="ask" other=1` {
			t.Errorf("the agent opened with %v", ag.opened)
		}
		ag.mu.Unlock()

		reject := func(config map[string]jsontext.Value, want string) {
			t.Helper()
			seq := c.Dispatch(uri, &protocol.SessionConfigChangedAction{Config: config})
			envs := c.WaitFor("the rejection", func(envs []protocol.ActionEnvelope) bool {
				for _, e := range envs {
					if e.Origin != nil && e.Origin.ClientSeq == seq {
						return true
					}
				}
				return false
			})
			for _, e := range envs {
				if e.Origin != nil && e.Origin.ClientSeq == seq {
					if e.RejectionReason == nil || !strings.Contains(*e.RejectionReason, want) {
						t.Errorf("%v: rejection %v, want %q", config, e.RejectionReason, want)
					}
				}
			}
		}
		reject(map[string]jsontext.Value{"isolation": sessionconfig.Value("folder")}, `"isolation" cannot change after the session was created`)
		reject(map[string]jsontext.Value{"mode": sessionconfig.Value("fly")}, `"fly" is not one of`)

		c.Dispatch(uri, &protocol.SessionConfigChangedAction{Config: map[string]jsontext.Value{"mode": sessionconfig.Value("code")}})
		select {
		case <-ag.heard:
		case <-time.After(10 * time.Second):
			t.Fatal("the agent did not hear of the change")
		}
		ag.mu.Lock()
		if len(ag.changes) != 1 || renderValues(ag.changes[0]) != `mode="code"` {
			t.Errorf("the agent heard %v", ag.changes)
		}
		ag.mu.Unlock()
		c.WaitFor("the change", func(envs []protocol.ActionEnvelope) bool {
			return countType("session/configChanged", envs) >= 3
		})
		if err := th.h.Close(); err != nil {
			t.Fatal(err)
		}

		// After a restart the session opens with the values it had.
		th2 := startPipeHost(t, &host.Options{Store: st, Agents: []agent.Backend{ag}})
		c2 := th2.dial(t, "b")
		c2.initialize()
		state = c2.Subscribe(uri).State.(*protocol.SessionState)
		if state.Config == nil || renderValues(state.Config.Values) != `isolation="worktree" mode="code" other=1` {
			t.Fatalf("session config after restart %+v", state.Config)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			ag.mu.Lock()
			n := len(ag.opened)
			var last map[string]jsontext.Value
			if n > 0 {
				last = ag.opened[n-1]
			}
			ag.mu.Unlock()
			if n == 2 {
				if renderValues(last) != `isolation="worktree" mode="code" other=1` {
					t.Errorf("reopened with %v", last)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the session was not reopened (%d opens)", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestSessionConfigWithoutSchema: an agent that takes no configuration
// resolves to an empty schema and echoes the values; a session created
// with values keeps them under an empty schema, and no change is allowed.
func TestSessionConfigWithoutSchema(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "a")
	c.initialize()
	var res protocol.ResolveSessionConfigResult
	c.Must("resolveSessionConfig", &protocol.ResolveSessionConfigParams{Config: map[string]jsontext.Value{"x": sessionconfig.Value("y")}}, &res)
	if len(res.Schema.Properties) != 0 || renderValues(res.Values) != "" || string(res.Values["x"]) != `"y"` {
		t.Errorf("resolved %+v", res)
	}
	uri, _ := c.newSession("plain")
	if st := c.Subscribe(uri).State.(*protocol.SessionState); st.Config != nil {
		t.Errorf("a session without configuration has %+v", st.Config)
	}
	uri2 := protocol.SessionURI("valued")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri2, Config: map[string]jsontext.Value{"x": sessionconfig.Value("y")}}, nil)
	st := c.Subscribe(uri2).State.(*protocol.SessionState)
	if st.Config == nil || string(st.Config.Values["x"]) != `"y"` || len(st.Config.Schema.Properties) != 0 {
		t.Errorf("config %+v", st.Config)
	}
	seq := c.Dispatch(uri2, &protocol.SessionConfigChangedAction{Config: map[string]jsontext.Value{"x": sessionconfig.Value("z")}})
	envs := c.WaitFor("the rejection", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == seq {
				return true
			}
		}
		return false
	})
	for _, e := range envs {
		if e.Origin != nil && e.Origin.ClientSeq == seq && (e.RejectionReason == nil || !strings.Contains(*e.RejectionReason, `no property "x"`)) {
			t.Errorf("rejection %v", e.RejectionReason)
		}
	}
}
