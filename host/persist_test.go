package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// eachStore runs f once with a memory store and once with a SQLite store.
// The store outlives the hosts f starts on it, as a data directory outlives
// a process.
func eachStore(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("memory", func(t *testing.T) {
		st := store.NewMemory()
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
}

// eachStoreInBubble is eachStore with each store's test in a synctest
// bubble, the store opened inside it: the clients' and the host's
// timeouts follow the bubble's clock, which stands still while anything
// in the bubble is running, so a slow machine cannot make them expire.
// The host must be served over pipes (startPipeHost).
func eachStoreInBubble(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("memory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st := store.NewMemory()
			t.Cleanup(func() { st.Close() })
			f(t, st)
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st, err := sqlite.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			f(t, st)
		})
	})
}

// spyStore counts what is read from a store and can be told to fail
// writes, as a full disk would.
type spyStore struct {
	store.Store
	loads     atomic.Int64 // LoadSession calls
	turnsRead atomic.Int64 // turns returned by LoadSession and Turns
	failing   atomic.Bool
	failSeq   error
	stall     atomic.Pointer[chan struct{}] // when set, writes wait until it is closed
}

func (s *spyStore) Write(ctx context.Context, b store.Batch) error {
	if s.failing.Load() {
		return fmt.Errorf("spy store: %w", store.ErrFull)
	}
	if ch := s.stall.Load(); ch != nil {
		<-*ch
	}
	return s.Store.Write(ctx, b)
}

func (s *spyStore) Seq(ctx context.Context) (int64, error) {
	if s.failSeq != nil {
		return 0, s.failSeq
	}
	return s.Store.Seq(ctx)
}

func (s *spyStore) LoadSession(ctx context.Context, uri string, recent int) (*store.SessionData, error) {
	s.loads.Add(1)
	d, err := s.Store.LoadSession(ctx, uri, recent)
	if err == nil {
		for _, c := range d.Channels {
			s.turnsRead.Add(int64(len(c.Turns)))
		}
	}
	return d, err
}

func (s *spyStore) Turns(ctx context.Context, chat string, from, to int64) ([]store.Turn, error) {
	turns, err := s.Store.Turns(ctx, chat, from, to)
	s.turnsRead.Add(int64(len(turns)))
	return turns, err
}

// endedOn waits for the end of a turn on one chat.
func endedOn(chat string) func([]protocol.ActionEnvelope) bool {
	return func(envs []protocol.ActionEnvelope) bool { return turnEnded(only(chat, envs)) }
}

func countType(typ string, envs []protocol.ActionEnvelope) int {
	n := 0
	for _, e := range envs {
		if e.Action.Type() == typ {
			n++
		}
	}
	return n
}

func maxSeq(envs []protocol.ActionEnvelope) int64 {
	var m int64
	for _, e := range envs {
		m = max(m, e.ServerSeq)
	}
	return m
}

func startTurn(c *client, chat, id, text string) {
	c.T.Helper()
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(text)})
}

// chatOnStore starts a host on st and a client "a" subscribed to the
// default chat of a new session, and returns them with the session's and
// the chat's URIs.
func chatOnStore(t *testing.T, st store.Store, title string) (*testHost, *client, string, string) {
	t.Helper()
	th := startHost(t, &host.Options{Store: st})
	c := th.dial(t, "a")
	c.initialize()
	uri, chat := c.newSession(title)
	c.Subscribe(chat)
	return th, c, uri, chat
}

// runNamedTurns runs n turns on a chat, t0 to t(n-1), each with the message
// text, one after the other.
func runNamedTurns(c *client, chat string, n int, text string) {
	c.T.Helper()
	for i := range n {
		startTurn(c, chat, fmt.Sprintf("t%d", i), text)
		c.WaitFor("turn", func(envs []protocol.ActionEnvelope) bool {
			return countType("chat/turnComplete", only(chat, envs)) == i+1
		})
	}
}

func list(c *client) []protocol.SessionSummary {
	c.T.Helper()
	var res protocol.ListSessionsResult
	c.Must("listSessions", &protocol.ListSessionsParams{}, &res)
	return res.Items
}

// TestRestartKeepsSessions closes a host and starts another on the same
// store: the catalog, every channel's state and the turns come back
// unchanged, and serverSeq continues above what was issued.
func TestRestartKeepsSessions(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th := startHost(t, &host.Options{Store: st})
		c := th.dial(t, "a")
		c.initialize(protocol.RootURI)
		uri, chat := c.newSession("keep")
		c.Subscribe(chat)
		startTurn(c, chat, "t1", "hello world")
		c.WaitFor("first turn", endedOn(chat))
		second := protocol.ChatURI("second")
		c.Subscribe(uri)
		c.Must("createChat", &protocol.CreateChatParams{Channel: uri, Chat: second, InitialMessage: protocol.Ptr(userMessage("in the second chat"))}, nil)
		if c.Subscribe(second).State.(*protocol.ChatState).ActiveTurn != nil {
			c.WaitFor("second chat's turn", endedOn(second))
		}
		other, _ := c.newSession("other")
		c.Dispatch(other, &protocol.SessionTitleChangedAction{Title: "Renamed"})
		c.WaitFor("rename", hasTitle("Renamed"))

		before := list(c)
		states := map[string]string{}
		for _, u := range []string{uri, chat, second, other} {
			states[u] = encode(t, c.Subscribe(u).State)
		}
		last := maxSeq(c.WaitFor("", func([]protocol.ActionEnvelope) bool { return true }))
		if err := th.h.Close(); err != nil {
			t.Fatal(err)
		}
		// A stop snapshots every channel, so reading one back replays
		// nothing.
		for _, s := range []string{uri, other} {
			data, err := st.LoadSession(context.Background(), s, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range data.Channels {
				if len(ch.Actions) > 0 {
					t.Errorf("%s: %d actions logged after the last snapshot of a stopped host", ch.Channel, len(ch.Actions))
				}
			}
		}

		th2 := startHost(t, &host.Options{Store: st})
		c2 := th2.dial(t, "b")
		res := c2.initialize()
		if res.ServerSeq <= last {
			t.Fatalf("serverSeq after restart %d, not above %d", res.ServerSeq, last)
		}
		if d := cmp.Diff(encode(t, before), encode(t, list(c2))); d != "" {
			t.Fatalf("catalog after restart (-before +after):\n%s", d)
		}
		for u, want := range states {
			if d := cmp.Diff(want, encode(t, c2.Subscribe(u).State)); d != "" {
				t.Fatalf("%s after restart (-before +after):\n%s", u, d)
			}
		}
		// The session works on: a new turn runs.
		startTurn(c2, chat, "t2", "again")
		envs := c2.WaitFor("a turn after restart", endedOn(chat))
		for _, e := range envs {
			if e.ServerSeq <= last {
				t.Fatalf("serverSeq %d after restart, not above %d", e.ServerSeq, last)
			}
		}
	})
}

// TestCrashEndsInterruptedTurn crashes a host in the middle of a streaming
// turn: after the restart the turn has failed (lifecycle.md: in-progress
// turns are considered failed), with what was saved of it, and the
// catalog no longer shows it running.
func TestCrashEndsInterruptedTurn(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th, c, uri, chat := chatOnStore(t, st, "crash")
		startTurn(c, chat, "slow", "/slow 500")
		// docs/persistence.md, "When a change is saved": a client that has seen an
		// action and then gets a listSessions reply knows the action
		// survives a crash. Deltas that arrive while the reply waits for
		// the save may be lost, so only those seen before the request
		// count.
		seen := c.WaitFor("some deltas", func(envs []protocol.ActionEnvelope) bool { return countType("chat/delta", envs) >= 5 })
		saved := countType("chat/delta", seen)
		list(c)
		th.h.Crash()

		th2 := startHost(t, &host.Options{Store: st})
		c2 := th2.dial(t, "b")
		c2.initialize(protocol.RootURI)
		items := list(c2)
		if len(items) != 1 || items[0].Resource != uri {
			t.Fatalf("catalog after the crash: %+v", items)
		}
		if items[0].Status&protocol.SessionStatusInProgress != 0 || items[0].Status&protocol.SessionStatusError == 0 {
			t.Fatalf("session status after the crash %d: want an error, not in progress", items[0].Status)
		}
		cs := c2.Subscribe(chat).State.(*protocol.ChatState)
		if cs.ActiveTurn != nil || len(cs.Turns) != 1 {
			t.Fatalf("after the crash: active %v, %d turns", cs.ActiveTurn, len(cs.Turns))
		}
		turn := cs.Turns[0]
		if turn.ID != "slow" || turn.State != protocol.TurnStateError || turn.Error == nil || turn.Error.ErrorType != "hostRestart" {
			t.Fatalf("the interrupted turn: %+v", turn)
		}
		text := turn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String()
		if words := len(strings.Fields(text)); words < saved {
			t.Fatalf("the turn kept %d words, but %d deltas were saved", words, saved)
		}

		// A second restart finds nothing to end.
		th2.h.Close()
		th3 := startHost(t, &host.Options{Store: st})
		c3 := th3.dial(t, "c")
		c3.initialize()
		cs = c3.Subscribe(chat).State.(*protocol.ChatState)
		if len(cs.Turns) != 1 || cs.ActiveTurn != nil {
			t.Fatalf("after a second restart: %d turns, active %v", len(cs.Turns), cs.ActiveTurn)
		}
	})
}

// TestReconnectAcrossRestart: a client that saw serverSeq values of the old
// run gets fresh snapshots, never a replay; one that saw the new run gets a
// replay.
func TestReconnectAcrossRestart(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th := startHost(t, &host.Options{Store: st})
		a := th.dial(t, "rc")
		a.initialize()
		uri, chat := a.newSession("rc")
		a.Subscribe(chat)
		startTurn(a, chat, "t1", "before the crash")
		last := maxSeq(a.WaitFor("turn", endedOn(chat)))
		list(a) // saved
		th.h.Crash()

		th2 := startHost(t, &host.Options{Store: st})
		a2 := th2.dial(t, "rc")
		var raw jsonValue
		// The restarted host does not know the client: it answers with
		// snapshots (lifecycle.md), never a replay, in the version the
		// client names.
		a2.Must("reconnect", &protocol.ReconnectParams{ClientID: "rc", LastSeenServerSeq: last, Subscriptions: []string{uri, chat},
			Meta: map[string]jsontext.Value{host.ReconnectVersionsMeta: jsontext.Value(`["0.8.0"]`)}}, &raw)
		res0, err := protocol.UnmarshalReconnectResult(jsontext.Value(raw))
		if err != nil {
			t.Fatal(err)
		}
		snaps, ok := res0.(*protocol.ReconnectSnapshotResult)
		if !ok {
			t.Fatalf("reconnect after a restart answered %T, want snapshots", res0)
		}
		if len(snaps.Snapshots) != 2 {
			t.Fatalf("want two snapshots after a restart, got %+v", snaps)
		}
		for _, s := range snaps.Snapshots {
			if s.FromSeq <= last {
				t.Fatalf("snapshot fromSeq %d, not above %d", s.FromSeq, last)
			}
		}
		if cs := snaps.Snapshots[1].State.(*protocol.ChatState); len(cs.Turns) != 1 {
			t.Fatalf("the chat snapshot has %d turns", len(cs.Turns))
		}

		// Seen in this run: a replay.
		b := th2.dial(t, "fresh")
		seen := b.initialize().ServerSeq
		b.Subscribe(chat)
		startTurn(b, chat, "t2", "after")
		b.WaitFor("turn", endedOn(chat))
		b2 := th2.dial(t, "fresh")
		b2.Must("reconnect", &protocol.ReconnectParams{ClientID: "fresh", LastSeenServerSeq: seen, Subscriptions: []string{chat}}, &raw)
		res, err := protocol.UnmarshalReconnectResult(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := res.(*protocol.ReconnectReplayResult); !ok || !turnEnded(r.Actions) {
			t.Fatalf("want a replay with the turn, got %T", res)
		}
	})
}

// TestLongHistoryIsPaged loads a chat of 10,000 turns for a subscribe with
// view.turns: only a window is read, fetchTurns pages the rest from the
// store, and a subscribe without a view still gets every turn.
func TestLongHistoryIsPaged(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, st store.Store) {
		th := startPipeHost(t, &host.Options{Store: st})
		c := th.dial(t, "a")
		c.initialize()
		uri, chat := c.newSession("long")
		c.Subscribe(chat)
		startTurn(c, chat, "h00000", "the first turn")
		c.WaitFor("turn", endedOn(chat))
		th.h.Close()

		// Copy the stored turn into a long history.
		const n = 10000
		ctx := context.Background()
		data, err := st.LoadSession(ctx, uri, 1)
		if err != nil {
			t.Fatal(err)
		}
		var first protocol.Turn
		if err := protocol.Unmarshal(data.Channels[1].Turns[0].Data, &first); err != nil {
			t.Fatal(err)
		}
		for start := 1; start < n; start += 1000 {
			var b store.Batch
			for i := start; i < min(start+1000, n); i++ {
				tn := first
				tn.ID = fmt.Sprintf("h%05d", i)
				enc, _ := protocol.Marshal(&tn)
				b = append(b, store.PutTurn{Turn: store.Turn{Chat: chat, Ordinal: int64(i), ID: tn.ID, Data: enc}})
			}
			if err := st.Write(ctx, b); err != nil {
				t.Fatal(err)
			}
		}

		spy := &spyStore{Store: st}
		th2 := startPipeHost(t, &host.Options{Store: spy, RecentTurns: 100})
		c2 := th2.dial(t, "b")
		c2.initialize()
		var sub protocol.SubscribeResult
		c2.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](20)}}, &sub)
		cs := sub.Snapshot.State.(*protocol.ChatState)
		if len(cs.Turns) != 20 || cs.Turns[19].ID != "h09999" || cs.TurnsNextCursor == nil {
			t.Fatalf("view of 20: %d turns, cursor %v", len(cs.Turns), cs.TurnsNextCursor)
		}
		if read := spy.turnsRead.Load(); read > 100 {
			t.Fatalf("subscribing read %d turns from the store", read)
		}

		// Page back: the first pages come from memory, later ones from
		// the store, always in order and without gaps.
		cursor := cs.TurnsNextCursor
		next := 9980
		for page := range 4 {
			c2.Must("fetchTurns", &protocol.FetchTurnsParams{Channel: chat, Cursor: cursor}, nil)
			envs := c2.WaitFor("a page", func(envs []protocol.ActionEnvelope) bool { return countType("chat/turnsLoaded", envs) > page })
			var loaded *protocol.ChatTurnsLoadedAction
			for _, e := range envs {
				if l, ok := e.Action.(*protocol.ChatTurnsLoadedAction); ok {
					loaded = l
				}
			}
			if len(loaded.Turns) != 50 || loaded.Turns[0].ID != fmt.Sprintf("h%05d", next-50) || loaded.Turns[49].ID != fmt.Sprintf("h%05d", next-1) {
				t.Fatalf("page %d: %d turns from %s", page, len(loaded.Turns), loaded.Turns[0].ID)
			}
			next -= 50
			cursor = loaded.TurnsNextCursor
		}
		// The latest turn read with the session, the 19 below it for the
		// view (kept in memory), then 50 for each page below those.
		if read := spy.turnsRead.Load(); read != 220 {
			t.Fatalf("paging read %d turns from the store, want 220", read)
		}

		// Without a view, every retained turn.
		full := c2.Subscribe(chat).State.(*protocol.ChatState)
		if len(full.Turns) != n || full.Turns[0].ID != "h00000" || full.TurnsNextCursor != nil {
			t.Fatalf("full snapshot: %d turns", len(full.Turns))
		}
	})
}

// TestSessionLoadsLatestTurn: a session read back from the store brings
// only the latest turn of each chat into memory; the first snapshot of a
// chat reads the rest of its window and keeps it, so a second subscriber
// reads nothing, and turns completed afterwards are stored under the
// right ordinals.
func TestSessionLoadsLatestTurn(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th, c, uri, chat := chatOnStore(t, st, "history")
		runNamedTurns(c, chat, 5, "hi")
		th.h.Close()

		ids := func(s *protocol.Snapshot) string {
			var out []string
			for _, t := range s.State.(*protocol.ChatState).Turns {
				out = append(out, t.ID)
			}
			return strings.Join(out, " ")
		}
		spy := &spyStore{Store: st}
		th2 := startHost(t, &host.Options{Store: spy})
		c2 := th2.dial(t, "b")
		c2.initialize()
		c2.Subscribe(uri)
		if n := spy.turnsRead.Load(); n != 1 {
			t.Fatalf("reading the session read %d turns, want the latest only", n)
		}
		if got := ids(c2.Subscribe(chat)); got != "t0 t1 t2 t3 t4" {
			t.Fatalf("first snapshot of the chat: %q", got)
		}
		if n := spy.turnsRead.Load(); n != 5 {
			t.Fatalf("%d turns read for the first snapshot, want 5 in all", n)
		}
		c3 := th2.dial(t, "c")
		c3.initialize()
		if got := ids(c3.Subscribe(chat)); got != "t0 t1 t2 t3 t4" {
			t.Fatalf("second snapshot of the chat: %q", got)
		}
		if n := spy.turnsRead.Load(); n != 5 {
			t.Fatalf("the second snapshot read %d more turns", n-5)
		}
		startTurn(c2, chat, "t5", "again")
		c2.WaitFor("turn", endedOn(chat))
		th2.h.Close()

		th3 := startHost(t, &host.Options{Store: st})
		c4 := th3.dial(t, "d")
		c4.initialize()
		if got := ids(c4.Subscribe(chat)); got != "t0 t1 t2 t3 t4 t5" {
			t.Fatalf("after another restart: %q", got)
		}
	})
}

// TestUnusedSessionsStayInStore: after a restart only the catalog is read;
// a session's channels are read on first use.
func TestUnusedSessionsStayInStore(t *testing.T) {
	st := store.NewMemory()
	th := startHost(t, &host.Options{Store: st})
	c := th.dial(t, "a")
	c.initialize()
	var chats []string
	for i := range 5 {
		_, chat := c.newSession(fmt.Sprintf("s%d", i))
		c.Subscribe(chat)
		startTurn(c, chat, "t", "hi")
		c.WaitFor("turn", endedOn(chat))
		chats = append(chats, chat)
	}
	th.h.Close()

	spy := &spyStore{Store: st}
	th2 := startHost(t, &host.Options{Store: spy})
	c2 := th2.dial(t, "b")
	c2.initialize(protocol.RootURI)
	if n := len(list(c2)); n != 5 {
		t.Fatalf("listed %d sessions", n)
	}
	if n := spy.loads.Load(); n != 0 {
		t.Fatalf("%d sessions read before any was used", n)
	}
	// An action on a chat not yet in memory reads its session.
	c2.Subscribe(chats[2])
	startTurn(c2, chats[2], "t2", "again")
	c2.WaitFor("turn", endedOn(chats[2]))
	if n := spy.loads.Load(); n != 1 {
		t.Fatalf("%d sessions read, want 1", n)
	}
}

// TestStoreFailure: while writes fail (a full disk), requests that would
// change state are refused with a clear error, nothing already accepted is
// dropped, and the host recovers when the store does.
func TestStoreFailure(t *testing.T) {
	mem := store.NewMemory()
	spy := &spyStore{Store: mem}
	th := startHost(t, &host.Options{Store: spy})
	c := th.dial(t, "a")
	c.initialize()
	uri, _ := c.newSession("ok")
	c.Subscribe(uri)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The session's start is saved first: a write of it still pending
	// would fail first, and the host would then reject the title.
	if err := th.h.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	spy.failing.Store(true)
	c.Dispatch(uri, &protocol.SessionTitleChangedAction{Title: "while failing"})
	c.WaitFor("title", hasTitle("while failing"))
	err := th.h.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Sync while the store fails: %v", err)
	}
	err = c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("refused")}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot save changes") {
		t.Fatalf("createSession while the store fails: %v", err)
	}
	if err := c.Call("listSessions", &protocol.ListSessionsParams{}, nil); err == nil || !strings.Contains(err.Error(), "not saved") {
		t.Fatalf("listSessions while the store fails: %v", err)
	}
	seq := c.Dispatch(uri, &protocol.SessionTitleChangedAction{Title: "refused"})
	envs := c.WaitFor("rejection", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != nil {
				return true
			}
		}
		return false
	})
	if r := *envs[len(envs)-1].RejectionReason; !strings.Contains(r, "cannot save") {
		t.Fatalf("rejection reason %q", r)
	}

	spy.failing.Store(false)
	// Sync reports the failure until the writer's next attempt succeeds;
	// each call waits for the writer's next outcome.
	for th.h.Sync(ctx) != nil {
		if ctx.Err() != nil {
			t.Fatal("the host did not recover with the store")
		}
		th.h.WaitWrite(ctx)
	}
	c.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("after")}, nil)
	th.h.Close()

	wantTitlesAfterRestart(t, mem, map[string]string{uri: "while failing", protocol.SessionURI("after"): "New Session"})
}

// wantTitlesAfterRestart starts a new host on st and checks the titles of
// the sessions it lists.
func wantTitlesAfterRestart(t *testing.T, st store.Store, want map[string]string) {
	t.Helper()
	th := startHost(t, &host.Options{Store: st})
	c := th.dial(t, "b")
	c.initialize()
	titles := map[string]string{}
	for _, s := range list(c) {
		titles[s.Resource] = s.Title
	}
	if d := cmp.Diff(want, titles); d != "" {
		t.Fatalf("sessions after a restart (-want +got):\n%s", d)
	}
}

// TestStalledStore: when the store stops answering, the host refuses new
// work once a change has waited MaxSaveDelay, which bounds what a crash
// could lose; it takes work again once the store catches up.
func TestStalledStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory()
		spy := &spyStore{Store: mem}
		clock := newManualClock()
		th := startPipeHost(t, &host.Options{Store: spy, MaxSaveDelay: 100 * time.Millisecond, Now: clock.Now})
		c := th.dial(t, "a")
		c.initialize()
		uri, _ := c.newSession("stall")
		c.Subscribe(uri)

		stall := make(chan struct{})
		spy.stall.Store(&stall)
		// Release the store however the test ends, so a failure is reported
		// instead of the host's shutdown waiting on a stalled write forever.
		release := sync.OnceFunc(func() { close(stall) })
		t.Cleanup(release)
		c.Dispatch(uri, &protocol.SessionTitleChangedAction{Title: "queued while stalled"})
		// This title's echo, not an earlier title's: the clock must move only
		// once the change is queued. The echo is sent before the commit
		// queues the change for the store, under the same lock, so the
		// client may read it first: wait for the host to go idle.
		c.WaitFor("title", hasTitle("queued while stalled"))
		synctest.Wait()
		clock.Advance(150 * time.Millisecond)
		err := c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("refused")}, nil)
		if err == nil || !strings.Contains(err.Error(), "has not saved changes for") {
			t.Fatalf("createSession while the store stalls: %v", err)
		}
		release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := th.h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		c.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("accepted")}, nil)
		th.h.Crash()

		wantTitlesAfterRestart(t, mem, map[string]string{uri: "queued while stalled", protocol.SessionURI("accepted"): "New Session"})
	})
}

// TestTruncateBeyondWindow truncates to a turn that is only in the store:
// the host loads it for every subscriber first, then truncates, and the
// result is what comes back after a restart.
func TestTruncateBeyondWindow(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		opts := &host.Options{Store: st, RecentTurns: 2}
		th := startHost(t, opts)
		c := th.dial(t, "a")
		c.initialize()
		_, chat := c.newSession("trunc")
		c.Subscribe(chat)
		runNamedTurns(c, chat, 6, "turn")
		th.h.Close()

		th2 := startHost(t, opts)
		c2 := th2.dial(t, "b")
		c2.initialize()
		var sub protocol.SubscribeResult
		c2.Must("subscribe", &protocol.SubscribeParams{Channel: chat, View: &protocol.SubscribeView{Turns: protocol.Ptr[int64](1)}}, &sub)
		snap := sub.Snapshot
		bad := c2.Dispatch(chat, &protocol.ChatTruncatedAction{TurnID: protocol.Ptr("nope")})
		c2.Dispatch(chat, &protocol.ChatTruncatedAction{TurnID: protocol.Ptr("t1")})
		envs := c2.WaitFor("truncation", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if _, ok := e.Action.(*protocol.ChatTruncatedAction); ok && e.RejectionReason == nil {
					return true
				}
			}
			return false
		})
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == bad && e.RejectionReason == nil {
				t.Fatal("truncating to an unknown turn was accepted")
			}
		}
		mirrored := mirror(t, snap, envs).(*protocol.ChatState)
		var ids []string
		for _, tn := range mirrored.Turns {
			ids = append(ids, tn.ID)
		}
		if d := cmp.Diff([]string{"t1"}, ids); d != "" {
			t.Fatalf("the client's turns after truncation (-want +got):\n%s", d)
		}
		full := c2.Subscribe(chat).State.(*protocol.ChatState)
		if len(full.Turns) != 2 || full.Turns[1].ID != "t1" {
			t.Fatalf("host turns after truncation: %d", len(full.Turns))
		}
		th2.h.Close()

		th3 := startHost(t, opts)
		c3 := th3.dial(t, "c")
		c3.initialize()
		if n := len(c3.Subscribe(chat).State.(*protocol.ChatState).Turns); n != 2 {
			t.Fatalf("after a restart: %d turns, want 2", n)
		}
		startTurn(c3, chat, "t9", "new")
		c3.WaitFor("turn", endedOn(chat))
		if got := c3.Subscribe(chat).State.(*protocol.ChatState).Turns; len(got) != 3 || got[2].ID != "t9" {
			t.Fatalf("a turn after truncation: %d turns", len(got))
		}
	})
}

// TestDisposalsSurviveRestart: disposed sessions and chats stay gone.
func TestDisposalsSurviveRestart(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th := startHost(t, &host.Options{Store: st})
		c := th.dial(t, "a")
		c.initialize()
		gone, _ := c.newSession("gone")
		kept, _ := c.newSession("kept")
		extra := protocol.ChatURI("extra")
		c.Must("createChat", &protocol.CreateChatParams{Channel: kept, Chat: extra}, nil)
		c.Must("disposeChat", &protocol.DisposeChatParams{Channel: extra}, nil)
		c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: gone}, nil)
		th.h.Crash()

		th2 := startHost(t, &host.Options{Store: st})
		c2 := th2.dial(t, "b")
		c2.initialize()
		items := list(c2)
		if len(items) != 1 || items[0].Resource != kept {
			t.Fatalf("sessions after restart: %+v", items)
		}
		if err := c2.Call("subscribe", &protocol.SubscribeParams{Channel: extra}, nil); rpcCode(err) != protocol.CodeNotFound {
			t.Fatalf("subscribing to a disposed chat: %v", err)
		}
		if st := c2.Subscribe(kept).State.(*protocol.SessionState); len(st.Chats) != 1 {
			t.Fatalf("the kept session lists %d chats", len(st.Chats))
		}
		// The URIs can be used again.
		c2.Must("createSession", &protocol.CreateSessionParams{Channel: gone}, nil)
	})
}

// TestStartFailsOnUnreadableStore: a store that cannot be read stops the
// host at start with an error that says so.
func TestStartFailsOnUnreadableStore(t *testing.T) {
	spy := &spyStore{Store: store.NewMemory(), failSeq: fmt.Errorf("disk: %w", store.ErrCorrupt)}
	_, err := host.New(&host.Options{Store: spy})
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "reading the store") {
		t.Fatalf("New on an unreadable store: %v", err)
	}
}

// TestSeqIncreasesAcrossRestarts restarts repeatedly, with and without a
// crash: serverSeq never goes back.
func TestSeqIncreasesAcrossRestarts(t *testing.T) {
	st := store.NewMemory()
	var last int64
	for i := range 4 {
		th := startHost(t, &host.Options{Store: st})
		c := th.dial(t, fmt.Sprintf("c%d", i))
		seq := c.initialize().ServerSeq
		if seq <= last {
			t.Fatalf("restart %d: serverSeq %d, not above %d", i, seq, last)
		}
		_, chat := c.newSession(fmt.Sprintf("s%d", i))
		c.Subscribe(chat)
		startTurn(c, chat, "t", "hi")
		last = maxSeq(c.WaitFor("turn", endedOn(chat)))
		if i%2 == 0 {
			th.h.Crash()
		} else {
			th.h.Close()
		}
	}
}

// TestSaveLag streams deltas and checks that every change is saved within
// a small time: what a crash can lose is bounded.
func TestSaveLag(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		th, c, _, chat := chatOnStore(t, st, "lag")
		runNamedTurns(c, chat, 3, strings.Repeat("word ", 200))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := th.h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		batches, ops, lag := th.h.SaveStats()
		t.Logf("%d changes in %d batches, longest wait to be saved %v", ops, batches, lag)
		if lag > host.DefaultMaxSaveDelay {
			t.Fatalf("a change waited %v to be saved, more than the %v the host allows", lag, host.DefaultMaxSaveDelay)
		}
	})
}

// memoBackend remembers a value on open and records the Resume it got.
type memoBackend struct {
	resumes chan map[string]string
}

func (b *memoBackend) Info() protocol.AgentInfo {
	return protocol.AgentInfo{Provider: "memo", DisplayName: "Memo", Models: []protocol.SessionModelInfo{}}
}
func (b *memoBackend) Close() error { return nil }
func (b *memoBackend) Open(_ context.Context, req agent.OpenRequest, h agent.Host) (agent.Session, error) {
	b.resumes <- req.Resume
	h.Remember("conversation", "c-42")
	return memoSession{}, nil
}

type memoSession struct{}

func (memoSession) Handle(agent.Event) {}
func (memoSession) Close() error       { return nil }

// TestAgentMemoSurvivesRestart checks that what an agent asks the host to
// remember comes back in OpenRequest.Resume when the session reopens after
// a restart.
func TestAgentMemoSurvivesRestart(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		b := &memoBackend{resumes: make(chan map[string]string, 2)}
		th := startHost(t, &host.Options{Store: st, Agents: []agent.Backend{b}})
		c := th.dial(t, "a")
		c.initialize()
		uri, _ := c.newSession("memo")
		if r := <-b.resumes; r != nil {
			t.Fatalf("a new session got Resume %v", r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := th.h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		th.h.Close()

		th2 := startHost(t, &host.Options{Store: st, Agents: []agent.Backend{b}})
		c2 := th2.dial(t, "b")
		c2.initialize()
		c2.Subscribe(uri)
		select {
		case r := <-b.resumes:
			if r["conversation"] != "c-42" {
				t.Fatalf("Resume after restart %v", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the session was not reopened")
		}
	})
}

// TestStallLoggedAndSavedRepliesBounded: a store that stops answering
// (a frozen disk) fails nothing, so the host says it in the log once a
// change has waited MaxSaveDelay, and again when saving works again; a
// reply that means "saved" does not wait longer than MaxSaveDelay but
// fails saying why.
func TestStallLoggedAndSavedRepliesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncbuf.Buffer
		spy := &spyStore{Store: store.NewMemory()}
		th := startPipeHost(t, &host.Options{Store: spy, MaxSaveDelay: 150 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		c := th.dial(t, "a")
		c.initialize()
		c.newSession("before")

		stall := make(chan struct{})
		spy.stall.Store(&stall)
		start := time.Now()
		err := c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("during")}, nil)
		if err == nil || !strings.Contains(err.Error(), "not saved within 150ms") {
			t.Fatalf("createSession while the store stalls: %v after %v", err, time.Since(start))
		}
		waitLog := func(what string) {
			t.Helper()
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), what); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the log does not say %q:\n%s", what, logs.String())
				}
			}
		}
		waitLog("saving changes is stalled")
		close(stall)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := th.h.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		waitLog("saving changes works again")
		if n := strings.Count(logs.String(), "is stalled"); n != 1 {
			t.Fatalf("the stall was logged %d times:\n%s", n, logs.String())
		}
	})
}

// manualClock is a clock that moves only when told to.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock { return &manualClock{now: time.Now()} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestIdleStoreChecked: the write-ahead log deleted while the host has
// nothing (or little) to write is found within about a second, what it
// held is saved into the database, and a crash then loses nothing
// acknowledged.
func TestIdleStoreChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncbuf.Buffer
		dir := t.TempDir()
		st, err := sqlite.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		th := startPipeHost(t, &host.Options{Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		c := th.dial(t, "a")
		c.initialize()
		uri, _ := c.newSession("kept")
		if err := os.Remove(filepath.Join(dir, sqlite.DBFile+"-wal")); err != nil {
			t.Fatal(err)
		}
		// Found by the idle check, or by the batch of a change still coming
		// from the session's start: both say so.
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "write-ahead log was deleted"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the deleted log was not found:\n%s", logs.String())
			}
		}
		// What a crash leaves on disk now.
		crash := t.TempDir()
		for _, name := range []string{sqlite.DBFile, sqlite.DBFile + "-wal"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				os.WriteFile(filepath.Join(crash, name), b, 0o600)
			}
		}
		after, err := sqlite.Open(crash, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer after.Close()
		list, err := after.Sessions(context.Background(), nil, 10)
		if err != nil || len(list) != 1 || list[0].URI != uri {
			t.Fatalf("after a crash: %+v %v", list, err)
		}
	})
}
