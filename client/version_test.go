package client_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// dialVersions connects a client that offers exactly the given versions.
func dialVersions(t *testing.T, url string, versions ...string) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	c, err := client.Connect(ctx, url, &client.Options{Now: fixedClock, ProtocolVersions: versions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if res := c.InitializeResult(); res.ProtocolVersion != versions[0] {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, versions[0])
	}
	return c
}

// rawClient is a recording client at one version, to see the wire shapes.
func rawClient(t *testing.T, url, version string, subs ...string) *hosttest.Client {
	t.Helper()
	c := hosttest.Dial(t, url, "raw-"+version)
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{version}, ClientID: c.ID, InitialSubscriptions: subs}, nil)
	return c
}

// TestVersionsWatchAFailingTurn is the acceptance test of speaking 1.x
// beside the older versions: clients at 1.0.0 and at 0.8.0 watch the same
// failing turn. On the wire the first sees chat/error with an error part
// (spec-1.1 ChatErrorAction.part), the second the error member of 0.8.0;
// each client's mirror equals the host's state as its version sees it.
func TestVersionsWatchAFailingTurn(t *testing.T) {
	th := startHost(t, nil)
	newer := dialVersions(t, th.url, "1.0.0")
	older := dialVersions(t, th.url, "0.8.0", "0.7.0")
	newSess, newChat := newSession(t, newer)
	oldSess := subscribe(t, older, newSess.Snapshot().Resource)
	oldChat := subscribe(t, older, newChat.Snapshot().Resource)
	chatURI := newChat.Snapshot().Resource
	rawNew := rawClient(t, th.url, "1.0.0", chatURI)
	rawOld := rawClient(t, th.url, "0.8.0", chatURI)

	// The older client starts the turn; the echo agent fails it.
	if _, err := older.Dispatch(testCtx(t), chatURI, turnStarted("t1", "/error")); err != nil {
		t.Fatal(err)
	}
	waitState(t, newChat, "the turn ended for 1.0.0", turnDone("t1"))
	waitState(t, oldChat, "the turn ended for 0.8.0", turnDone("t1"))

	errorOf := func(c *hosttest.Client) *protocol.ChatErrorAction {
		envs := c.WaitFor("chat/error", hosttest.HasType("chat/error"))
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.ChatErrorAction); ok {
				return a
			}
		}
		t.Fatal("no chat/error")
		return nil
	}
	if a := errorOf(rawNew); a.Part == nil || a.Part.Kind() != "error" || a.Error != nil {
		t.Errorf("1.0.0 sees %s, want an error part", encode(t, a))
	}
	if a := errorOf(rawOld); a.Error == nil || a.Part != nil || !strings.Contains(encode(t, a), `"error":{`) {
		t.Errorf("0.8.0 sees %s, want the error member", encode(t, a))
	}

	host := hostState(t, th.url, chatURI).(*protocol.ChatState)
	last := host.Turns[len(host.Turns)-1]
	if _, ok := last.ResponseParts[len(last.ResponseParts)-1].(*protocol.ErrorResponsePart); !ok || last.Error != nil {
		t.Fatalf("the host keeps the failed turn as %s, want a last error part", encode(t, last))
	}
	for _, tc := range []struct {
		version string
		mirror  protocol.SnapshotState
	}{{"1.0.0", newChat.State()}, {"0.8.0", oldChat.State()}} {
		v := view.For(tc.version)
		sameState(t, tc.version+" chat", v.State(host), v.State(tc.mirror))
	}
	// What the 0.8.0 connection was sent is the 0.8.0 shape of the host's
	// state: the turn's error member, no error part.
	snap := rawOld.Subscribe(chatURI).State.(*protocol.ChatState)
	if got := snap.Turns[len(snap.Turns)-1]; got.Error == nil || slices.ContainsFunc(got.ResponseParts, func(p protocol.ResponsePart) bool { return p.Kind() == "error" }) {
		t.Errorf("0.8.0 snapshot of the failed turn: %s", encode(t, got))
	}
	sameState(t, "0.8.0 session", view.For("0.8.0").State(hostState(t, th.url, oldSess.Snapshot().Resource)), view.For("0.8.0").State(oldSess.State()))
}

// TestClientOffersNewestFirst checks that a client offers every version it
// speaks, the newest first, and gets 1.x from this host.
func TestClientOffersNewestFirst(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	if c.ProtocolVersion() != protocol.ProtocolVersion {
		t.Fatalf("negotiated %s, want %s", c.ProtocolVersion(), protocol.ProtocolVersion)
	}
	offered := protocol.SupportedVersions()
	if offered[0] != protocol.ProtocolVersion || !slices.Contains(offered, "1.0.0") || !slices.Contains(offered, "0.8.0") {
		t.Fatalf("offer %v", offered)
	}
}
