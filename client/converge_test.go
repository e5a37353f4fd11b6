package client_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

// TestConcurrentClientsConverge is a property test over random
// interleavings: two or three clients dispatch random actions on one
// session at once, while the echo agent streams the turns some of them
// start (or that the host starts from queued messages). Many of the
// actions are rejected (a turn already running, a message no longer
// queued). Once everything has settled, every client's mirror must equal
// the host's state, with nothing left pending.
func TestConcurrentClientsConverge(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, clients := range []int{2, 3} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("clients=%d/seed=%d", clients, seed), func(t *testing.T) {
				interleave(t, clients, uint64(seed))
			})
		}
	}
}

func interleave(t *testing.T, n int, seed uint64) {
	th := startHost(t, nil)
	ctx := testCtx(t)
	cs := make([]*client.Client, n)
	for i := range cs {
		cs[i] = dial(t, th.url, &client.Options{ClientID: fmt.Sprintf("client-%d", i)})
	}
	session0, chat0 := newSession(t, cs[0])
	sessions := []*client.Subscription{session0}
	chats := []*client.Subscription{chat0}
	for _, c := range cs[1:] {
		sessions = append(sessions, subscribe(t, c, session0.Channel()))
		chats = append(chats, subscribe(t, c, chat0.Channel()))
	}

	var wg sync.WaitGroup
	receipts := make([][]*client.Receipt, n)
	for i := range cs {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for k := range 15 {
				for range rng.IntN(4) {
					runtime.Gosched() // vary how the clients interleave
				}
				channel, a := randomAction(rng, fmt.Sprintf("%d-%d", i, k), chats[i])
				if channel == "session" {
					channel = sessions[i].Channel()
				} else {
					channel = chats[i].Channel()
				}
				r, err := cs[i].Dispatch(ctx, channel, a)
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				receipts[i] = append(receipts[i], r)
			}
		})
	}
	wg.Wait()
	rejected := 0
	for i := range receipts {
		for _, r := range receipts[i] {
			if err := r.Wait(ctx); err != nil {
				if _, ok := err.(*client.RejectedError); !ok {
					t.Fatalf("client %d: action %s: %v", i, r.Action.Type(), err)
				}
				rejected++
			}
		}
	}
	// Wait for the host to be quiet: no turn running and nothing queued
	// to start one. (A client may see a quiet moment the host does not
	// have: between removing a queued message and starting its turn.)
	// Until it is, every change the host makes reaches the watching
	// mirror: read the host's state again after each.
	changed := make(chan struct{}, 1)
	stop := chats[0].Watch(func(protocol.SnapshotState) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	var wantChat protocol.SnapshotState
	for deadline := time.After(10 * time.Second); ; {
		wantChat = hostState(t, th.url, chat0.Channel())
		if c := wantChat.(*protocol.ChatState); c.ActiveTurn == nil && len(c.QueuedMessages) == 0 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the chat never went quiet: %s", encode(t, wantChat))
		}
	}
	wantSession := hostState(t, th.url, session0.Channel())
	for i := range cs {
		converge(t, fmt.Sprintf("client %d chat", i), chats[i], wantChat)
		converge(t, fmt.Sprintf("client %d session", i), sessions[i], wantSession)
		if p := chats[i].Pending(); len(p) != 0 {
			t.Errorf("client %d: %d chat actions still pending", i, len(p))
		}
	}
	t.Logf("%d turns, %d actions rejected", len(wantChat.(*protocol.ChatState).Turns), rejected)
}

// converge waits for a mirror to reach the host's state.
func converge(t *testing.T, what string, s *client.Subscription, want protocol.SnapshotState) {
	t.Helper()
	wantJSON := encode(t, want)
	done := make(chan struct{})
	var once sync.Once
	stop := s.Watch(func(st protocol.SnapshotState) {
		if encode(t, st) == wantJSON {
			once.Do(func() { close(done) })
		}
	})
	defer stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		sameState(t, what, want, s.State())
	}
}

// randomAction picks a client action, on the chat or the session, that
// may or may not be accepted.
func randomAction(rng *rand.Rand, id string, chat *client.Subscription) (string, protocol.StateAction) {
	st := chat.Chat()
	switch rng.IntN(9) {
	case 0, 1:
		return "chat", turnStarted("turn-"+id, fmt.Sprintf("prompt %s with a few words", id))
	case 2:
		return "chat", &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindQueued, ID: "q-" + id, Message: userMessage("queued " + id)}
	case 3:
		return "chat", &protocol.ChatPendingMessageSetAction{Kind: protocol.PendingMessageKindSteering, ID: "s-" + id, Message: userMessage("steer " + id)}
	case 4:
		target := "q-nothing"
		if len(st.QueuedMessages) > 0 {
			target = st.QueuedMessages[rng.IntN(len(st.QueuedMessages))].ID
		}
		return "chat", &protocol.ChatPendingMessageRemovedAction{Kind: protocol.PendingMessageKindQueued, ID: target}
	case 5:
		turn := "none"
		if st.ActiveTurn != nil {
			turn = st.ActiveTurn.ID
		}
		return "chat", &protocol.ChatTurnCancelledAction{TurnID: turn}
	case 6:
		return "chat", &protocol.ChatDraftChangedAction{Draft: protocol.Ptr(userMessage("draft " + id))}
	case 7:
		return "session", &protocol.SessionTitleChangedAction{Title: "title " + id}
	default:
		return "session", &protocol.SessionIsReadChangedAction{IsRead: rng.IntN(2) == 0}
	}
}
