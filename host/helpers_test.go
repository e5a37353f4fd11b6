package host_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// testHost runs a host with the echo agent behind a real WebSocket server
// on 127.0.0.1.
type testHost struct {
	*hosttest.Server
	h   *host.Host
	url string
}

func startHost(t *testing.T, opts *host.Options) *testHost {
	t.Helper()
	h := newHost(t, opts)
	s := hosttest.Serve(t, h)
	return &testHost{Server: s, h: h, url: s.URL}
}

// startPipeHost runs a host like startHost, but its clients connect over
// in-memory pipes and it has no URL. Called inside a synctest bubble, the
// host and its clients wait only on the bubble's fake clock.
func startPipeHost(t *testing.T, opts *host.Options) *testHost {
	t.Helper()
	h := newHost(t, opts)
	return &testHost{Server: hosttest.ServePipe(t, h), h: h}
}

func newHost(t *testing.T, opts *host.Options) *host.Host {
	t.Helper()
	var o host.Options
	if opts != nil {
		o = *opts
	}
	if o.Agents == nil {
		o.Agents = []agent.Backend{echo.New(&echo.Options{WordDelay: -1, SlowDelay: 20 * time.Millisecond})}
	}
	h, err := host.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// client is the shared bare test client, plus helpers of these tests.
type client struct{ *hosttest.Client }

func (th *testHost) dial(t *testing.T, clientID string) *client {
	t.Helper()
	return &client{th.Server.Dial(t, clientID)}
}

func (c *client) initialize(subs ...string) *protocol.InitializeResult {
	c.T.Helper()
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: c.ID, InitialSubscriptions: subs}, &res)
	return &res
}

var (
	hasType     = hosttest.HasType
	userMessage = hosttest.UserMessage
)

func turnEnded(envs []protocol.ActionEnvelope) bool {
	for _, e := range envs {
		switch e.Action.(type) {
		case *protocol.ChatTurnCompleteAction, *protocol.ChatErrorAction, *protocol.ChatTurnCancelledAction:
			return true
		}
	}
	return false
}

// newSession creates a session and returns its URI and default chat.
func (c *client) newSession(id string) (string, string) {
	c.T.Helper()
	uri := protocol.SessionURI(id)
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
	var sub protocol.SubscribeResult
	c.Must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	st := sub.Snapshot.State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		// This session's own ready: an earlier session's is in the
		// envelopes too.
		c.WaitFor("session ready", func(envs []protocol.ActionEnvelope) bool {
			return countType("session/ready", only(uri, envs)) > 0
		})
	}
	return uri, *st.DefaultChat
}

// hasTitle reports the echo of a session/titleChanged to title (not any
// title change: a session's first title comes from the host) that the
// host accepted: a rejected one changed nothing.
func hasTitle(title string) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			a, ok := e.Action.(*protocol.SessionTitleChangedAction)
			return ok && a.Title == title && e.RejectionReason == nil
		})
	}
}

// only keeps the envelopes of one channel.
func only(channel string, envs []protocol.ActionEnvelope) []protocol.ActionEnvelope {
	var out []protocol.ActionEnvelope
	for _, e := range envs {
		if e.Channel == channel {
			out = append(out, e)
		}
	}
	return out
}

// mirror applies every received envelope for a channel to a snapshot.
func mirror(t *testing.T, snap *protocol.Snapshot, envs []protocol.ActionEnvelope) protocol.SnapshotState {
	t.Helper()
	r := reducer.Reducer{Now: fixedClock}
	st := snap.State
	for _, e := range envs {
		if e.Channel == snap.Resource && e.ServerSeq > snap.FromSeq && e.RejectionReason == nil {
			st = r.Apply(st, e.Action)
		}
	}
	return st
}

func rpcCode(err error) protocol.ErrorCode {
	var e *protocol.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
