package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// Example runs a host in the process, sends a prompt to its echo agent and
// prints the reply once the turn is over.
func Example() {
	h, _ := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}})
	defer h.Close()
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, "ws"+srv.URL[len("http"):], nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Create a session and follow its default chat.
	uri := protocol.SessionURI(client.NewID())
	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: uri}); err != nil {
		log.Fatal(err)
	}
	session, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		log.Fatal(err)
	}
	chat, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: *session.Session().DefaultChat})
	if err != nil {
		log.Fatal(err)
	}

	// Start a turn. The mirror shows it at once, before the host echoes it.
	turn := client.NewID()
	if _, err := chat.Dispatch(ctx, &protocol.ChatTurnStartedAction{
		TurnID:    turn,
		StartedAt: protocol.FormatTime(time.Now()),
		Message:   protocol.Message{Text: "hello world", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
	}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("running:", chat.Chat().ActiveTurn.ID == turn)

	// Follow the chat until the turn is over.
	for {
		if _, err := chat.Next(ctx); err != nil {
			log.Fatal(err)
		}
		st := chat.Chat()
		if st.ActiveTurn == nil && len(st.Turns) == 1 {
			fmt.Println(st.Turns[0].State, st.Turns[0].ResponseParts[0].(*protocol.MarkdownResponsePart).Content)
			return
		}
	}
	// Output:
	// running: true
	// complete You said: hello world
}

// A client that publishes files to the host answers the host's resource
// requests with typed handlers. Here a bare JSON-RPC peer plays the host
// and asks for a file.
func ExampleHandlers() {
	clientSide, hostSide := jsonrpc.Pipe()
	hostConn := jsonrpc.NewConn(hostSide, nil, nil)
	defer hostConn.Close()

	files := map[string]string{"file:///notes.txt": "buy milk"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.DialTransport(ctx, func(context.Context) (jsonrpc.Transport, error) { return clientSide, nil }, &client.Options{
		Handlers: client.Handlers{
			ResourceRead: func(ctx context.Context, p *protocol.ResourceReadParams) (*protocol.ResourceReadResult, error) {
				data, ok := files[p.URI]
				if !ok {
					return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: "no such file: " + p.URI}
				}
				return &protocol.ResourceReadResult{Data: data, Encoding: protocol.ContentEncodingUtf8}, nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var res protocol.ResourceReadResult
	err = hostConn.Call(ctx, "resourceRead", &protocol.ResourceReadParams{URI: "file:///notes.txt"}, &res)
	fmt.Println(res.Data, err)
	err = hostConn.Call(ctx, "resourceRead", &protocol.ResourceReadParams{URI: "file:///other.txt"}, nil)
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// A request without a handler is refused at once.
	err = hostConn.Call(ctx, "resourceDelete", &protocol.ResourceDeleteParams{URI: "file:///notes.txt"}, nil)
	fmt.Println(errors.Is(err, client.ErrMethodNotFound))
	// Output:
	// buy milk <nil>
	// true
	// true
}
