package jsonrpc_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
)

// A result encoded after room for the response's head reaches the peer
// byte for byte: built in the handler's own buffer, or, with too little
// room, copied. An empty one is sent as null.
func TestEncodedWithRoom(t *testing.T) {
	const page = `{"items":[{"a":1} ,{"b":"x"}]}`
	var mu sync.Mutex
	bufs := map[string][]byte{}
	h := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		room := jsonrpc.ResponseRoom
		switch req.Method {
		case "small":
			room = 3
		case "empty":
			return &jsonrpc.EncodedWithRoom{Buf: make([]byte, room), Room: room}, nil
		}
		buf := make([]byte, room, room+len(page)+1)
		buf = append(buf, page...)
		mu.Lock()
		bufs[req.Method] = buf
		mu.Unlock()
		return &jsonrpc.EncodedWithRoom{Buf: buf, Room: room}, nil
	})
	a, _ := transports[0].pair(t, newService(), h, nil)
	ctx := testContext(t)
	for _, tt := range []struct{ method, want string }{{"page", page}, {"small", page}, {"empty", "null"}} {
		var got jsontext.Value
		if err := a.Call(ctx, tt.method, nil, &got); err != nil || string(got) != tt.want {
			t.Errorf("%s: result %s, %v; want %s", tt.method, got, err, tt.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if head := string(bufs["page"][:jsonrpc.ResponseRoom]); !strings.HasSuffix(head, `,"result":`) || !strings.Contains(head, `{"jsonrpc":"2.0","id":`) {
		t.Errorf("the response was not built in the handler's buffer: room holds %q", head)
	}
	if head := string(bufs["small"][:3]); head != "\x00\x00\x00" {
		t.Errorf("a room too small was written to: %q", head)
	}
}
