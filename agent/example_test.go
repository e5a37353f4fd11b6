package agent_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// shout is an agent that answers every prompt in capitals.
type shout struct{}

func (shout) Info() protocol.AgentInfo {
	return protocol.AgentInfo{Provider: "shout", DisplayName: "Shout", Description: "answers in capitals"}
}

func (shout) Open(ctx context.Context, req agent.OpenRequest, h agent.Host) (agent.Session, error) {
	return &shoutSession{host: h}, nil
}

func (shout) Close() error { return nil }

type shoutSession struct{ host agent.Host }

// Handle answers a turn as soon as it starts. A real agent would run the
// turn on a goroutine of its own and stream deltas.
func (s *shoutSession) Handle(ev agent.Event) {
	started, ok := ev.Action.(*protocol.ChatTurnStartedAction)
	if !ok {
		return
	}
	text := strings.ToUpper(started.Message.Text)
	s.host.Dispatch(ev.Channel, &protocol.ChatResponsePartAction{
		TurnID: started.TurnID,
		Part:   &protocol.MarkdownResponsePart{ID: "answer", Content: protocol.TextOf(text)},
	})
	s.host.Dispatch(ev.Channel, &protocol.ChatTurnCompleteAction{TurnID: started.TurnID})
}

func (s *shoutSession) Close() error { return nil }

// An agent backend served by a host, and a client that prompts it over an
// in-memory connection.
func Example() {
	h, err := host.New(&host.Options{Agents: []agent.Backend{shout{}}})
	if err != nil {
		panic(err)
	}
	defer h.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.ConnectTransport(ctx, func(ctx context.Context) (jsonrpc.Transport, error) {
		clientSide, hostSide := jsonrpc.Pipe()
		go h.ServeTransport(context.Background(), hostSide)
		return clientSide, nil
	}, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	uri := protocol.SessionURI("demo")
	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("shout")}); err != nil {
		panic(err)
	}
	session, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		panic(err)
	}
	chat, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: *session.Session().DefaultChat})
	if err != nil {
		panic(err)
	}
	if _, err := chat.Dispatch(ctx, &protocol.ChatTurnStartedAction{
		TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()),
		Message: protocol.Message{Text: "hello", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
	}); err != nil {
		panic(err)
	}
	for {
		if _, err := chat.Next(ctx); err != nil {
			panic(err)
		}
		if st := chat.Chat(); len(st.Turns) == 1 {
			fmt.Println(st.Turns[0].State, st.Turns[0].ResponseParts[0].(*protocol.MarkdownResponsePart).Content)
			return
		}
	}
	// Output:
	// complete HELLO
}
