package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// offeringAgent is the echo agent offering two models and a mode, and
// recording the messages of the turns it runs.
type offeringAgent struct {
	agent.Backend
	mu   sync.Mutex
	msgs []protocol.Message
}

func (a *offeringAgent) Info() protocol.AgentInfo {
	info := a.Backend.Info()
	info.Models = append(info.Models, protocol.SessionModelInfo{ID: "big", Provider: info.Provider, Name: "Big"})
	info.Customizations = []protocol.Customization{&protocol.PluginCustomization{ID: "modes", URI: "acp:modes", Name: "Modes",
		Children: []protocol.ChildCustomization{&protocol.AgentCustomization{ID: "plan", URI: "acp:mode/plan", Name: "Plan"}}}}
	return info
}

func (a *offeringAgent) Open(ctx context.Context, req agent.OpenRequest, h agent.Host) (agent.Session, error) {
	s, err := a.Backend.Open(ctx, req, h)
	if err != nil {
		return nil, err
	}
	return recordingSession{s, a}, nil
}

func (a *offeringAgent) last() protocol.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.msgs) == 0 {
		return protocol.Message{}
	}
	return a.msgs[len(a.msgs)-1]
}

type recordingSession struct {
	agent.Session
	a *offeringAgent
}

func (s recordingSession) Handle(ev agent.Event) {
	if t, ok := ev.Action.(*protocol.ChatTurnStartedAction); ok {
		s.a.mu.Lock()
		s.a.msgs = append(s.a.msgs, t.Message)
		s.a.mu.Unlock()
	}
	s.Session.Handle(ev)
}

func newOfferingHarness(t *testing.T) (*harness, *offeringAgent) {
	var hostIDs atomic.Int64
	ag := &offeringAgent{Backend: echo.New(&echo.Options{WordDelay: -1, SlowDelay: 2 * time.Millisecond})}
	h, err := host.New(&host.Options{
		Now:    fixedClock,
		NewID:  func() string { return fmt.Sprintf("host-%d", hostIDs.Add(1)) },
		Agents: []agent.Backend{ag},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &harness{t: t, url: "ws" + strings.TrimPrefix(srv.URL, "http")}, ag
}

func selected(m protocol.Message) string {
	var model, ag string
	if m.Model != nil {
		model = m.Model.ID
	}
	if m.Agent != nil {
		ag = string(m.Agent.URI)
	}
	return model + "|" + ag
}

// TestModelAndAgentSelection: --model and --agent, and /model and /agent
// in chat, choose among what the root state offers, and every message
// carries the choice.
func TestModelAndAgentSelection(t *testing.T) {
	h, ag := newOfferingHarness(t)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)

	if r := h.cmd("", "send", "--model", "Big", "--agent", "plan", id, "hi").run(t); r.code != 0 {
		t.Fatalf("send: %d %s", r.code, r.stderr)
	}
	if got := selected(ag.last()); got != "big|acp:mode/plan" {
		t.Errorf("send carried %q", got)
	}
	r := h.cmd("", "send", "--model", "huge", id, "hi").run(t)
	if r.code != exitUsage || r.stderr != "ahp send: --model: no model \"huge\" here; the host offers echo-1 (Echo), big (Big)\n" {
		t.Errorf("unknown model: %d %q", r.code, r.stderr)
	}
	r = h.cmd("", "send", "--agent", "build", id, "hi").run(t)
	if r.code != exitUsage || !strings.HasSuffix(r.stderr, "no agent \"build\" here; the host offers Plan\n") {
		t.Errorf("unknown agent: %d %q", r.code, r.stderr)
	}

	r = h.cmd("/model\n/model big\n/agent\n/agent Plan\n/model nope\nfirst\n/model -\n/agent -\nsecond\n", "chat", "--model", "echo-1", id).run(t)
	if r.code != 0 {
		t.Fatalf("chat: %d %s", r.code, r.stderr)
	}
	want := `* echo-1  Echo
  big  Big
model: big
  Plan  acp:mode/plan
agent: acp:mode/plan
no model "nope" here; the host offers echo-1 (Echo), big (Big)
model: the agent's default
agent: the default
`
	_, got, _ := strings.Cut(r.stderr, "leaves.\n")
	got = strings.ReplaceAll(got, "(queued until the running turn ends)\n", "") // as timing has it
	if got != want {
		t.Errorf("chat said:\n%s\nwant:\n%s", got, want)
	}
	ag.mu.Lock()
	msgs := ag.msgs
	ag.mu.Unlock()
	if len(msgs) != 3 || selected(msgs[1]) != "big|acp:mode/plan" || selected(msgs[2]) != "|" {
		var got []string
		for _, m := range msgs {
			got = append(got, m.Text+"="+selected(m))
		}
		t.Errorf("messages %q", got)
	}
}

// TestChatShowsHistoryWithModels: joining a chat on a terminal shows its
// last turns, each with the model it ran with.
func TestChatShowsHistoryWithModels(t *testing.T) {
	h, _ := newOfferingHarness(t)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	for _, p := range []string{"one", "two"} {
		if r := h.cmd("", "send", id, p).run(t); r.code != 0 {
			t.Fatalf("send: %d %s", r.code, r.stderr)
		}
	}
	inv := h.cmd("", "chat", id)
	inv.env.stdoutTTY = true
	r := inv.run(t)
	if want := "» one   (echo-1)\nYou said: one\n» two   (echo-1)\nYou said: two\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	r = h.cmd("", "--json", "chat", id).run(t)
	if !strings.Contains(r.stdout, `{"message":"one","model":"echo-1","state":"complete","text":"You said: one","turnId":`) {
		t.Errorf("--json history: %s", r.stdout)
	}
}
