package host_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
	"github.com/ahp-go/ahp/store"
)

// chatOrder lists a session's chats in catalog order.
func chatOrder(st protocol.SnapshotState) []string {
	var out []string
	for _, c := range st.(*protocol.SessionState).Chats {
		out = append(out, c.Resource)
	}
	return out
}

// sameJSONState fails when two states encode differently.
func sameJSONState(t *testing.T, what string, want, got protocol.SnapshotState) {
	t.Helper()
	w, err1 := protocol.Marshal(want)
	g, err2 := protocol.Marshal(got)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if diff := cmp.Diff(string(w), string(g)); diff != "" {
		t.Errorf("%s (-host +mirror):\n%s", what, diff)
	}
}

// TestMoveChatToSession moves a chat with history into another session
// (MoveChatParams): the source gets session/chatRemoved, the destination
// session/chatAdded and session/chatsReordered to put it after the
// anchor, and the root summaries follow. The chat keeps its URI, state and
// subscribers, which hear nothing of the move, and the destination's agent
// answers its next prompt. A 0.8.0 client, which knows no
// session/chatsReordered, sees the chat added at the end of the catalog;
// its mirror of the source equals the host's state as it sees it.
func TestMoveChatToSession(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0", protocol.RootURI)
	src, srcDef := c.newSession("src")
	dst, dstDef := c.newSession("dst")
	chat := protocol.ChatURI("moving")
	c.Must("createChat", &protocol.CreateChatParams{Channel: src, Chat: chat}, nil)
	second := protocol.ChatURI("second")
	c.Must("createChat", &protocol.CreateChatParams{Channel: dst, Chat: second}, nil)
	c.Subscribe(chat)
	startTurn(c, chat, "t1", "before the move")
	c.WaitFor("the first turn", endedOn(chat))
	beforeChat := c.Subscribe(chat).State

	// Watchers: a chat-only subscriber, and a 0.8.0 client on both
	// sessions.
	w := th.dial(t, "w")
	w.initializeAt("1.1.0")
	chatSnap := w.Subscribe(chat)
	old := th.dial(t, "old")
	old.initializeAt("0.8.0")
	oldSrc, oldDst := old.Subscribe(src), old.Subscribe(dst)
	newSrc, newDst := c.Subscribe(src), c.Subscribe(dst)
	mark := len(c.Envelopes())

	var res protocol.MoveChatResult
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToSessionDestination{Session: dst, After: &dstDef}}, &res)
	if res.Session != dst {
		t.Fatalf("moveChat answered %+v", res)
	}
	c.WaitFor("the reorder", hasType("session/chatsReordered"))
	old.WaitFor("the chat added", hasType("session/chatAdded"))

	srcState, dstState := c.Subscribe(src).State, c.Subscribe(dst).State
	if got := chatOrder(srcState); !slices.Equal(got, []string{srcDef}) {
		t.Errorf("the source lists %v", got)
	}
	if got, want := chatOrder(dstState), []string{dstDef, chat, second}; !slices.Equal(got, want) {
		t.Errorf("the destination lists %v, want %v", got, want)
	}
	sameJSONState(t, "the moved chat", beforeChat, c.Subscribe(chat).State)
	var types []string
	for _, e := range c.Envelopes()[mark:] {
		if e.Channel == src || e.Channel == dst {
			types = append(types, e.Channel+" "+e.Action.Type())
		}
	}
	if want := []string{src + " session/chatRemoved", dst + " session/chatAdded", dst + " session/chatsReordered"}; !slices.Equal(types, want) {
		t.Errorf("the sessions got %v, want %v", types, want)
	}
	for _, e := range w.Envelopes() {
		if e.ServerSeq > chatSnap.FromSeq {
			t.Errorf("the chat's own subscriber got %s", e.Action.Type())
		}
	}
	// Each client's mirror equals the host's state as its version sees it.
	for _, m := range []struct {
		what       string
		c          *client
		snap       *protocol.Snapshot
		want       protocol.SnapshotState
		v          *view.View
		checkOrder bool
	}{
		{"1.1.0 source", c, newSrc, srcState, view.Current, true},
		{"1.1.0 destination", c, newDst, dstState, view.Current, true},
		{"0.8.0 source", old, oldSrc, srcState, view.For("0.8.0"), true},
		{"0.8.0 destination", old, oldDst, dstState, view.For("0.8.0"), false},
	} {
		got := mirror(t, m.snap, m.c.Envelopes())
		if m.checkOrder {
			sameJSONState(t, m.what, m.v.State(m.want), got)
			continue
		}
		// Without session/chatsReordered the older client has the chat
		// at the end.
		if got, want := chatOrder(got), []string{dstDef, second, chat}; !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", m.what, got, want)
		}
	}
	// The root summaries follow.
	for _, s := range list(c) {
		var got []string
		for _, ch := range s.Chats {
			got = append(got, ch.Resource)
		}
		want := map[string][]string{src: {srcDef}, dst: {dstDef, chat, second}}[s.Resource]
		if !slices.Equal(got, want) {
			t.Errorf("the summary of %s lists %v, want %v", s.Resource, got, want)
		}
	}
	// The destination's agent takes the chat's next prompt.
	startTurn(c, chat, "t2", "after the move")
	c.WaitFor("the second turn", func(envs []protocol.ActionEnvelope) bool {
		return countType("chat/turnComplete", only(chat, envs)) == 2
	})
}

// TestMoveChatToNewSession: a newSession destination allocates a session on
// the source's provider, announced with root/sessionAdded, whose default
// chat the moved chat becomes, no longer movable (ChatState.movable: a
// default chat never is; chat/movableChanged tells its subscribers).
func TestMoveChatToNewSession(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "c")
	c.initializeAt("1.1.0", protocol.RootURI)
	src, srcDef := c.newSession("src")
	chat := protocol.ChatURI("leaving")
	c.Must("createChat", &protocol.CreateChatParams{Channel: src, Chat: chat}, nil)
	c.Subscribe(chat)
	root := th.dial(t, "root")
	root.initializeAt("1.1.0", protocol.RootURI)
	var res protocol.MoveChatResult
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToNewSessionDestination{}}, &res)
	if res.Session == src || res.Session == "" {
		t.Fatalf("moveChat answered %+v", res)
	}
	// The host names the session <provider>:/<uuid>, as VS Code does.
	if !strings.HasPrefix(res.Session, echo.Provider+":/") {
		t.Errorf("new session %s is not named after its provider", res.Session)
	}
	var added protocol.SessionAddedParams
	if err := protocol.Unmarshal(root.WaitNotification("root/sessionAdded").Params, &added); err != nil || added.Summary.Resource != res.Session || added.Summary.Provider != echo.Provider {
		t.Errorf("root/sessionAdded %+v (%v)", added, err)
	}
	c.WaitFor("the chat's movable", hasType("chat/movableChanged"))
	cs := c.Subscribe(chat).State.(*protocol.ChatState)
	if cs.Movable == nil || *cs.Movable {
		t.Errorf("the moved chat's movable is %v", cs.Movable)
	}
	st := c.Subscribe(res.Session).State.(*protocol.SessionState)
	if st.DefaultChat == nil || *st.DefaultChat != chat || !slices.Equal(chatOrder(st), []string{chat}) {
		t.Fatalf("the new session: default %v, chats %v", st.DefaultChat, chatOrder(st))
	}
	if m := st.Chats[0].Movable; m == nil || *m {
		t.Errorf("the new session lists its default chat with movable %v", m)
	}
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		c.WaitFor("the new session ready", func(envs []protocol.ActionEnvelope) bool {
			return countType("session/ready", only(res.Session, envs)) > 0
		})
	}
	if got := chatOrder(c.Subscribe(src).State); !slices.Equal(got, []string{srcDef}) {
		t.Errorf("the source lists %v", got)
	}
	if err := c.Call("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToSessionDestination{Session: src}}, nil); rpcCode(err) != protocol.CodeInvalidParams {
		t.Errorf("moving the new session's default chat: %v", err)
	}
	startTurn(c, chat, "t1", "in the new session")
	c.WaitFor("a turn in the new session", endedOn(chat))
}

// renamed is an agent provider under another name.
type renamed struct {
	agent.Backend
	name string
}

func (r renamed) Info() protocol.AgentInfo {
	info := r.Backend.Info()
	info.Provider = r.name
	return info
}

// TestMoveChatAcrossProviders: a chat moves only between sessions of one
// agent provider; the conversation cannot go to another agent.
func TestMoveChatAcrossProviders(t *testing.T) {
	e := echo.New(&echo.Options{WordDelay: -1})
	th := startHost(t, &host.Options{Agents: []agent.Backend{e, renamed{e, "other"}}})
	c := th.dial(t, "c")
	c.initializeAt("1.1.0")
	src, _ := c.newSession("src")
	dst := protocol.SessionURI("dst")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: dst, Provider: protocol.Ptr("other")}, nil)
	chat := protocol.ChatURI("c")
	c.Must("createChat", &protocol.CreateChatParams{Channel: src, Chat: chat}, nil)
	err := c.Call("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToSessionDestination{Session: dst}}, nil)
	if rpcCode(err) != protocol.CodeInvalidParams {
		t.Fatalf("moving to another provider: %v", err)
	}
	if got := chatOrder(c.Subscribe(src).State); len(got) != 2 {
		t.Errorf("the source lists %v", got)
	}
}

// batchStore records the batches written, and can fail writes.
type batchStore struct {
	store.Store
	mu      sync.Mutex
	batches []store.Batch
	failing bool
}

func (s *batchStore) Write(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	failing := s.failing
	if !failing {
		s.batches = append(s.batches, b)
	}
	s.mu.Unlock()
	if failing {
		return store.ErrFull
	}
	return s.Store.Write(ctx, b)
}

func (s *batchStore) setFailing(on bool) {
	s.mu.Lock()
	s.failing = on
	s.mu.Unlock()
}

// TestMoveChatIsAtomic: every operation a move writes is in one batch,
// which the store applies atomically, so a crash (kill -9) at any point
// keeps the chat in exactly one session. A move that was not saved when
// the host crashed leaves the chat where it was; a saved one survives a
// restart, with its history, in the destination.
func TestMoveChatIsAtomic(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		synctest.Test(t, func(t *testing.T) {
			bs := &batchStore{Store: st}
			th := startPipeHost(t, &host.Options{Store: bs, MaxSaveDelay: 300 * time.Millisecond})
			c := th.dial(t, "a")
			c.initializeAt("1.1.0")
			src, srcDef := c.newSession("src")
			dst, dstDef := c.newSession("dst")
			chat := protocol.ChatURI("moving")
			c.Must("createChat", &protocol.CreateChatParams{Channel: src, Chat: chat}, nil)
			c.Subscribe(chat)
			startTurn(c, chat, "t1", "kept history")
			c.WaitFor("the turn", endedOn(chat))
			bs.mu.Lock()
			mark := len(bs.batches)
			bs.mu.Unlock()
			c.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToSessionDestination{Session: dst}}, nil)

			// One batch holds the chat's snapshot under its new session and
			// both catalog entries, with the catalog changes of both sessions.
			bs.mu.Lock()
			var moveBatch store.Batch
			for _, b := range bs.batches[mark:] {
				for _, op := range b {
					if p, ok := op.(store.PutSnapshot); ok && p.Snapshot.Channel == chat && p.Snapshot.Session == dst {
						moveBatch = b
					}
				}
			}
			bs.mu.Unlock()
			if moveBatch == nil {
				t.Fatal("no batch moves the chat's channel")
			}
			var got []string
			for _, op := range moveBatch {
				switch op := op.(type) {
				case store.PutSession:
					got = append(got, "catalog "+op.Session.URI+" "+strings.Join(op.Session.Chats, ""))
				case store.AppendAction:
					var env protocol.ActionEnvelope
					if err := protocol.Unmarshal(op.Action.Envelope, &env); err != nil {
						t.Fatal(err)
					}
					got = append(got, env.Channel+" "+env.Action.Type())
				}
			}
			for _, want := range []string{
				"catalog " + src + " " + srcDef,
				"catalog " + dst + " " + dstDef + chat,
				src + " session/chatRemoved",
				dst + " session/chatAdded",
				dst + " session/chatsReordered",
			} {
				if !slices.Contains(got, want) {
					t.Errorf("the move's batch lacks %q: %v", want, got)
				}
			}

			// A move the store never saved: the host crashes with it in
			// memory only.
			bs.setFailing(true)
			if err := c.Call("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToNewSessionDestination{}}, nil); err == nil || !strings.Contains(err.Error(), "done, but not saved") {
				t.Fatalf("an unsaved move answered %v", err)
			}
			th.h.Crash()
			bs.setFailing(false)

			th2 := startPipeHost(t, &host.Options{Store: st})
			c2 := th2.dial(t, "b")
			c2.initializeAt("1.1.0")
			items := list(c2)
			if len(items) != 2 {
				t.Fatalf("after the crash: %d sessions", len(items))
			}
			owners := 0
			for _, s := range items {
				if slices.ContainsFunc(s.Chats, func(c protocol.SessionChatSummary) bool { return c.Resource == chat }) {
					owners++
					if s.Resource != dst {
						t.Errorf("the chat is in %s after the restart, want %s", s.Resource, dst)
					}
				}
			}
			if owners != 1 {
				t.Errorf("%d sessions list the chat after the restart", owners)
			}
			if got, want := chatOrder(c2.Subscribe(dst).State), []string{chat, dstDef}; !slices.Equal(got, want) {
				t.Errorf("the destination lists %v after the restart, want %v", got, want)
			}
			if got := chatOrder(c2.Subscribe(src).State); !slices.Equal(got, []string{srcDef}) {
				t.Errorf("the source lists %v after the restart", got)
			}
			cs := c2.Subscribe(chat).State.(*protocol.ChatState)
			if len(cs.Turns) != 1 || cs.Turns[0].ID != "t1" {
				t.Errorf("the moved chat has %d turns after the restart", len(cs.Turns))
			}
			// The chat still moves, and takes prompts, in its new session.
			c2.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToNewSessionDestination{}}, nil)
			c2.Subscribe(chat)
			startTurn(c2, chat, "t2", "after the restart")
			c2.WaitFor("a turn after the restart", endedOn(chat))
		})
	})
}
