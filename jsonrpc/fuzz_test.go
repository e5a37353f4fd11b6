package jsonrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// echo answers every request with its params, half of them asynchronously.
var echo = jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if len(req.Method)%2 == 1 {
		return jsonrpc.Async(func(context.Context) (any, error) { return req.Params, nil }), nil
	}
	if req.Params == nil {
		return nil, nil
	}
	return req.Params, nil
})

// FuzzConnFrames feeds an arbitrary frame to a Conn, then checks that the
// connection still answers a call.
func FuzzConnFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"action","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"sentinel","method":"ab","params":[1]}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":1e999,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"b":{}}]}}`,
		"\xff\xfe", `{`, ``, `null`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		local, remote := jsonrpc.Pipe()
		c := jsonrpc.NewConn(local, echo, nil)
		defer func() {
			c.Close()
			<-c.Done()
		}()

		sentinel := `{"jsonrpc":"2.0","id":"fuzz-sentinel","method":"sentinel","params":[true]}`
		if err := remote.Write(ctx, frame); err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ctx, []byte(sentinel)); err != nil {
			t.Fatal(err)
		}
		for {
			data, err := remote.Read(ctx)
			if err != nil {
				t.Fatalf("connection lost after frame %q: %v (conn error %v)", frame, err, c.Err())
			}
			m, err := protocol.DecodeMessage(data)
			if err != nil {
				t.Fatalf("conn sent an invalid message %s: %v", data, err)
			}
			if m.Response != nil && m.Response.ID == protocol.StringID("fuzz-sentinel") {
				return
			}
		}
	})
}
