package acp_test

import (
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// TestResumeAfterHostRestart checks that a session reopened after a host
// restart reloads its ACP session (session/load) when the agent can,
// instead of starting the agent's conversation over.
func TestResumeAfterHostRestart(t *testing.T) {
	st := store.NewMemory()
	newHost := func() *testHost {
		cfg := testConfig("test")
		cfg.Env[acptest.LoadSessionEnv] = "1"
		b, err := acp.New(cfg, testOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Store: st, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, h)
	}

	th := newHost()
	c := th.dial(t, "a")
	uri, chat := c.newSession("resume", "test", "")
	c.startTurn(chat, "t1", "whoami")
	c.waitTurnEnd("t1")
	first := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts)
	if first == "" {
		t.Fatal("no answer to whoami")
	}
	c.RPC.Close()
	th.h.Close()

	th2 := newHost()
	c2 := th2.dial(t, "a")
	if got := c2.join(uri); got != chat {
		t.Fatalf("default chat %s after restart, want %s", got, chat)
	}
	c2.startTurn(chat, "t2", "whoami")
	c2.waitTurnEnd("t2")
	second := markdown(finishedTurn(t, th2.chatState(t, chat), "t2").ResponseParts)
	if second != first {
		t.Fatalf("after the restart the agent answered %q, want the reloaded session %q", second, first)
	}
}

// TestMovedChatKeepsItsConversation: a chat moved to another session
// (moveChat), or to a new one, goes on with the ACP session it had: the
// destination's agent process reloads it (session/load) instead of
// starting the conversation over.
func TestMovedChatKeepsItsConversation(t *testing.T) {
	cfg := testConfig("test")
	cfg.Env[acptest.LoadSessionEnv] = "1"
	b, err := acp.New(cfg, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	th := serve(t, h)
	c := th.dialAt(t, "a", protocol.ProtocolVersion) // moveChat is a 1.x method
	src, _ := c.newSession("src", "test", "")
	dst, _ := c.newSession("dst", "test", "")
	chat := protocol.ChatURI("moving")
	c.Must("createChat", &protocol.CreateChatParams{Channel: src, Chat: chat}, nil)
	c.Subscribe(chat)
	whoami := func(turn string) string {
		t.Helper()
		c.startTurn(chat, turn, "whoami")
		c.waitTurnEnd(turn)
		got := markdown(finishedTurn(t, th.chatState(t, chat), turn).ResponseParts)
		if got == "" {
			t.Fatalf("no answer to whoami in %s", turn)
		}
		return got
	}
	first := whoami("t1")
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToSessionDestination{Session: dst}}, nil)
	if got := whoami("t2"); got != first {
		t.Fatalf("after moving to another session the agent answered %q, want the reloaded session %q", got, first)
	}
	c.Must("moveChat", &protocol.MoveChatParams{Channel: chat, Destination: &protocol.ChatMoveToNewSessionDestination{}}, nil)
	if got := whoami("t3"); got != first {
		t.Fatalf("after moving to a new session the agent answered %q, want the reloaded session %q", got, first)
	}
}
