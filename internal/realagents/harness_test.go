package realagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/internal/modelserver"
	"github.com/ahp-go/ahp/internal/realagents"
	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/protocol"
)

// wait bounds each wait of these tests: real agents start node and load
// megabytes of JavaScript, on shared CI machines.
const wait = 60 * time.Second

// killTimeout is how long an agent may take to exit after SIGTERM.
const killTimeout = 3 * time.Second

// rig is one agent behind a host, a scripted model server, and two
// clients: a drives, b only watches (and answers permissions when told).
type rig struct {
	t      *testing.T
	model  *modelserver.Server
	b      *acp.Backend
	srv    *hosttest.Server
	a, w   *client.Client
	ctx    context.Context
	home   string
	logBuf *syncbuf.Buffer
}

// newRig installs (or finds) the agent, configures it against a new model
// server in a fresh home, probes it and serves it. edit changes the
// configuration before the backend is made.
func newRig(t *testing.T, a realagents.Agent, edit func(*acp.Config)) *rig {
	t.Helper()
	bin := realagents.Find(t, a)
	r := &rig{t: t, model: modelserver.Start(t), home: t.TempDir(), logBuf: &syncbuf.Buffer{}}
	cfg, err := realagents.Config(a, bin, r.model.URL(), r.home)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(r.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("ahpd log:\n%s", r.logBuf.String())
			dump := os.Getenv("AHP_MODEL_DUMP") // a folder to keep the model requests in
			for i, q := range r.model.Requests() {
				if dump != "" {
					_ = os.WriteFile(filepath.Join(dump, fmt.Sprintf("%s-%02d.json", strings.ReplaceAll(t.Name(), "/", "_"), i)), q.Body, 0o644)
				}
				t.Logf("model request %s %s (scenario %q step %d): %.300s", q.Method, q.Path, q.Scenario, q.Step, q.Body)
			}
		}
	})
	r.b, err = acp.New(cfg, &acp.Options{Logger: log, KillTimeout: killTimeout, QuietAfter: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := r.b.Probe(ctx); err != nil {
		t.Fatalf("probe: %v", err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{r.b}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = hosttest.Serve(t, h)
	r.ctx = t.Context()
	r.a = r.dial("driver")
	r.w = r.dial("watcher")
	return r
}

func (r *rig) dial(id string) *client.Client {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, wait)
	defer cancel()
	c, err := client.Connect(ctx, r.srv.URL, &client.Options{ClientID: id})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

// chat is a session's default chat as both clients follow it.
type chat struct {
	r       *rig
	session string
	uri     string
	dir     string
	a, w    *client.Subscription
	wss     *client.Subscription // the watcher's session subscription

	mu   sync.Mutex
	seen []protocol.ActionEnvelope // what the watcher received
	wake chan struct{}
}

// newChat creates a session in a new working directory with the given
// session configuration, and subscribes both clients to it.
func (r *rig) newChat(config map[string]string) *chat {
	r.t.Helper()
	dir := filepath.Join(r.t.TempDir(), "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	ctx, cancel := context.WithTimeout(r.ctx, wait)
	defer cancel()
	uri := protocol.SessionURI(client.NewID())
	p := &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr(r.b.Config().Name), WorkingDirectories: []string{"file://" + dir}}
	if len(config) > 0 {
		p.Config = map[string]jsontext.Value{}
		for k, v := range config {
			p.Config[k] = jsontext.Value(strconv.Quote(v))
		}
	}
	if err := r.a.CreateSession(ctx, p); err != nil {
		r.t.Fatalf("createSession: %v", err)
	}
	c := &chat{r: r, session: uri, dir: dir, wake: make(chan struct{}, 1)}
	wss, err := r.w.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		r.t.Fatal(err)
	}
	c.wss = wss
	r.t.Cleanup(func() { wss.Close() })
	for {
		st := wss.Session()
		if st.Lifecycle == protocol.SessionLifecycleReady {
			c.uri = *st.DefaultChat
			break
		}
		if st.Lifecycle == protocol.SessionLifecycleCreationFailed {
			r.t.Fatalf("session creation failed: %+v", st.CreationError)
		}
		if _, err := wss.Next(ctx); err != nil {
			r.t.Fatalf("waiting for the session: %v", err)
		}
	}
	if c.a, err = r.a.Subscribe(ctx, &protocol.SubscribeParams{Channel: c.uri}); err != nil {
		r.t.Fatal(err)
	}
	if c.w, err = r.w.Subscribe(ctx, &protocol.SubscribeParams{Channel: c.uri}); err != nil {
		r.t.Fatal(err)
	}
	go func() { // ends with the subscription
		for {
			ev, err := c.w.Next(context.Background())
			if err != nil {
				return
			}
			if ev.Envelope != nil {
				c.mu.Lock()
				c.seen = append(c.seen, *ev.Envelope)
				c.mu.Unlock()
				select {
				case c.wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	r.t.Cleanup(func() { c.a.Close(); c.w.Close() })
	return c
}

// send starts a turn from the driver and returns its id.
func (c *chat) send(text string) string {
	c.r.t.Helper()
	return c.sendMessage(hosttest.UserMessage(text))
}

// sendMessage starts a turn with a message from the driver.
func (c *chat) sendMessage(msg protocol.Message) string {
	c.r.t.Helper()
	id := client.NewID()
	ctx, cancel := context.WithTimeout(c.r.ctx, wait)
	defer cancel()
	_, err := c.a.Dispatch(ctx, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()),
		Message: msg})
	if err != nil {
		c.r.t.Fatal(err)
	}
	return id
}

// waitSeen waits until the watcher has seen what cond looks for.
func (c *chat) waitSeen(what string, cond func([]protocol.ActionEnvelope) bool) []protocol.ActionEnvelope {
	c.r.t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		envs := slices.Clone(c.seen)
		c.mu.Unlock()
		if cond(envs) {
			return envs
		}
		select {
		case <-c.wake:
		case <-deadline.C:
			if st := c.w.Chat(); st != nil && len(st.Turns) > 0 {
				b, _ := json.Marshal(st.Turns[len(st.Turns)-1])
				c.r.t.Logf("the watcher's last turn: %.3000s", b)
			}
			c.r.t.Fatalf("the watching client did not see %s; it saw %s", what, types(envs))
		}
	}
}

// types lists the envelopes' action types, for failure messages.
func types(envs []protocol.ActionEnvelope) string {
	var b strings.Builder
	for _, e := range envs {
		fmt.Fprintf(&b, " %s", e.Action.Type())
	}
	return b.String()
}

// end waits until the watcher sees the turn end and returns the action
// that ended it.
func (c *chat) end(turn string) protocol.StateAction {
	c.r.t.Helper()
	var end protocol.StateAction
	c.waitSeen("the end of turn "+turn, func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			switch a := e.Action.(type) {
			case *protocol.ChatTurnCompleteAction:
				if a.TurnID == turn {
					end = a
				}
			case *protocol.ChatErrorAction:
				if a.TurnID == turn {
					end = a
				}
			case *protocol.ChatTurnCancelledAction:
				if a.TurnID == turn {
					end = a
				}
			}
		}
		return end != nil
	})
	return end
}

// turn returns the watcher's mirror of a finished turn.
func (c *chat) turn(id string) protocol.Turn {
	c.r.t.Helper()
	st := c.w.Chat()
	for _, tr := range st.Turns {
		if tr.ID == id {
			return tr
		}
	}
	c.r.t.Fatalf("turn %s is not in the watcher's chat", id)
	return protocol.Turn{}
}

// deltas returns the text the watcher received as chat/delta for a turn.
func (c *chat) deltas(turn string) (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	n := 0
	for _, e := range c.seen {
		if d, ok := e.Action.(*protocol.ChatDeltaAction); ok && d.TurnID == turn {
			b.WriteString(d.Content)
			n++
		}
	}
	return b.String(), n
}

// markdown concatenates the markdown parts of a turn.
func markdown(parts []protocol.ResponsePart) string {
	var b strings.Builder
	for _, p := range parts {
		if md, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(md.Content.String())
		}
	}
	return b.String()
}

// toolCalls returns the tool calls of a turn's parts.
func toolCalls(parts []protocol.ResponsePart) []protocol.ToolCallState {
	var out []protocol.ToolCallState
	for _, p := range parts {
		if tp, ok := p.(*protocol.ToolCallResponsePart); ok {
			out = append(out, tp.ToolCall)
		}
	}
	return out
}

// permission waits for the watcher to see a tool call of the turn waiting
// for confirmation.
func (c *chat) permission(turn string) *protocol.ChatToolCallReadyAction {
	c.r.t.Helper()
	var ready *protocol.ChatToolCallReadyAction
	c.waitSeen("a tool call waiting for confirmation", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if r, ok := e.Action.(*protocol.ChatToolCallReadyAction); ok && r.TurnID == turn && r.Confirmed == nil && len(r.Options) > 0 {
				ready = r
				return true
			}
		}
		return false
	})
	return ready
}

// answer has the watcher answer a permission with the first option of
// the kind.
func (c *chat) answer(ready *protocol.ChatToolCallReadyAction, allow bool) {
	c.r.t.Helper()
	// The first option of the kind, preferring one that holds once only.
	var pick *protocol.ConfirmationOption
	for i, o := range ready.Options {
		if (o.Kind == protocol.ConfirmationOptionKindApprove) == allow && (o.Kind == protocol.ConfirmationOptionKindDeny) != allow {
			if pick == nil || strings.Contains(strings.ToLower(o.ID), "once") && !strings.Contains(strings.ToLower(pick.ID), "once") {
				pick = &ready.Options[i]
			}
		}
	}
	if pick == nil {
		c.r.t.Fatalf("no option to allow=%v in %+v", allow, ready.Options)
	}
	ctx, cancel := context.WithTimeout(c.r.ctx, wait)
	defer cancel()
	if _, err := c.w.Dispatch(ctx, &protocol.ChatToolCallConfirmedAction{TurnID: ready.TurnID, ToolCallID: ready.ToolCallID,
		Approved: allow, SelectedOptionID: &pick.ID}); err != nil {
		c.r.t.Fatal(err)
	}
}
