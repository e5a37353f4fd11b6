package jsonrpc_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// TestInvalidMessagesLogBounded sends 20 invalid requests, each with a
// 1 MiB id, then 20 notifications whose handler fails: every request
// still gets its error reply, but the log stays small (the values are
// clipped and repeats thinned out).
//
// Repeats are thinned out by time: the test runs in a synctest bubble
// over in-memory pipes, so the 40 messages come within one instant of the
// bubble's clock however slowly a busy machine runs them, as they do
// within a second on an idle one.
func TestInvalidMessagesLogBounded(t *testing.T) {
	synctest.Test(t, testInvalidMessagesLogBounded)
}

func testInvalidMessagesLogBounded(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	_, p := transports[0].withPeer(t, newService(), &jsonrpc.ConnOptions{Logger: log, MaxMessageSize: 4 << 20})
	id := strings.Repeat("x", 1<<20)
	for range 20 {
		p.send(`{"jsonrpc":"1.0","id":"` + id + `","method":"echo"}`)
		if r := p.recvResponse(); r.Error == nil || r.Error.Code != protocol.CodeInvalidRequest || r.ID != protocol.StringID(id) {
			t.Fatalf("reply %+v", r.Error)
		}
	}
	for range 20 {
		p.send(`{"jsonrpc":"2.0","method":"fail","params":{"x":"` + id + `"}}`)
	}
	p.send(`{"jsonrpc":"2.0","id":"after","method":"add","params":{"a":1,"b":1}}`)
	if r := p.recvResponse(); r.ID != protocol.StringID("after") {
		t.Fatalf("follow-up answered with %s", r.ID)
	}
	out := logs.String()
	if len(out) > 16<<10 {
		t.Fatalf("%d bytes of log for 40 bad messages; first line: %.300s", len(out), out)
	}
	for _, msg := range []string{`msg="jsonrpc: invalid message"`, `msg="jsonrpc: notification handler failed"`} {
		if n := strings.Count(out, msg); n < 1 || n > 5 {
			t.Fatalf("%d lines %s, want 1 to 5:\n%s", n, msg, out)
		}
	}
	if !strings.Contains(out, "bytes)") {
		t.Fatalf("clipped values do not say their length:\n%s", out)
	}
}
