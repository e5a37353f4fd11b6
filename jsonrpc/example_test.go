package jsonrpc_test

import (
	"context"
	"fmt"

	"github.com/ahp-go/ahp/jsonrpc"
)

func Example() {
	ctx := context.Background()
	serverEnd, clientEnd := jsonrpc.Pipe()

	// The server answers "greet" and refuses anything else.
	server := jsonrpc.NewConn(serverEnd, jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method != "greet" {
			return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, req.Method)
		}
		var p struct {
			Name string `json:"name"`
		}
		if err := req.UnmarshalParams(&p); err != nil {
			return nil, err
		}
		return "hello, " + p.Name, nil
	}), nil)
	defer server.Close()

	client := jsonrpc.NewConn(clientEnd, nil, nil)
	defer client.Close()

	var greeting string
	if err := client.Call(ctx, "greet", map[string]string{"name": "ahp"}, &greeting); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(greeting)

	err := client.Call(ctx, "shout", nil, nil)
	fmt.Println(err)
	// Output:
	// hello, ahp
	// jsonrpc: shout: method not found: shout
}
