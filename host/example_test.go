package host_test

import (
	"context"
	"fmt"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// A host with the echo agent, served over an in-memory transport to one
// client that creates a session and lists the catalog.
func Example() {
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(nil)}})
	if err != nil {
		panic(err)
	}
	defer h.Close()

	clientSide, hostSide := jsonrpc.Pipe()
	go h.ServeTransport(context.Background(), hostSide)
	conn := jsonrpc.NewConn(clientSide, nil, nil)
	defer conn.Close()

	ctx := context.Background()
	var init protocol.InitializeResult
	if err := conn.Call(ctx, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "example"}, &init); err != nil {
		panic(err)
	}
	fmt.Println("protocol", init.ProtocolVersion)
	if err := conn.Call(ctx, "createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("demo")}, nil); err != nil {
		panic(err)
	}
	var list protocol.ListSessionsResult
	if err := conn.Call(ctx, "listSessions", &protocol.ListSessionsParams{}, &list); err != nil {
		panic(err)
	}
	for _, s := range list.Items {
		fmt.Println(s.Resource, s.Provider, s.Title)
	}
	// Output:
	// protocol 0.8.0
	// ahp-session:/demo echo New Session
}
