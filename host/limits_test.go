package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// rawDial opens a bare WebSocket to the host that reads up to 64 MiB.
func rawDial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// pingFrame is a ping request padded to about size bytes.
func pingFrame(size int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"%s"}}`, strings.Repeat("x", size))
}

// TestMaxMessageBytes checks that a limit above the WebSocket library's
// 4 MiB default lets bigger messages in, and that a frame over the limit
// closes the connection with 1009, as docs/host.md says.
func TestMaxMessageBytes(t *testing.T) {
	th := startHost(t, &host.Options{MaxMessageBytes: 8 << 20})
	ws := rawDial(t, th.url)
	// A safety net, not a measure: with -race on a busy machine the 6 MiB
	// round trip alone can take over 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, pingFrame(6<<20)); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := ws.Read(ctx); err != nil || !strings.Contains(string(resp), `"result"`) {
		t.Fatalf("6 MiB message under an 8 MiB limit: %.200s, %v", resp, err)
	}

	small := startHost(t, &host.Options{MaxMessageBytes: 1 << 20})
	ws = rawDial(t, small.url)
	// The host stops reading at the frame's header, so the frame does not
	// fit in the socket's buffers and its write blocks: read meanwhile, as
	// a browser does. A client that reads only once its write returned
	// may never see the close frame: the host drops the connection when
	// its closing handshake goes unanswered for a second, and the failed
	// write then closes the client's side.
	written := make(chan struct{})
	go func() {
		defer close(written)
		ws.Write(ctx, websocket.MessageText, pingFrame(2<<20)) // fails once the host drops the connection
	}()
	_, _, err := ws.Read(ctx)
	<-written
	if status := websocket.CloseStatus(err); status != websocket.StatusMessageTooBig {
		t.Fatalf("a 2 MiB frame over a 1 MiB limit: %v (status %v), want status 1009", err, status)
	}
}

// TestDeadReaderByteBound checks that a subscriber that stops reading is
// dropped once its queue holds QueueBytes, even when the message count is
// far below QueueSize, while another client goes on.
func TestDeadReaderByteBound(t *testing.T) {
	th := startHost(t, &host.Options{QueueBytes: 4 << 20, ReplayBytes: 1 << 20})
	fast := th.dial(t, "fast")
	fast.initialize()
	session, _ := fast.newSession("s")

	slow := &blockingTransport{in: make(chan []byte, 4), closed: make(chan struct{}), written: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- th.h.ServeTransport(context.Background(), slow) }()
	slow.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"slow","initialSubscriptions":["` + session + `"]}}`)
	<-slow.written

	title := strings.Repeat("t", 1<<20)
	for i := range 8 {
		fast.Dispatch(session, &protocol.SessionTitleChangedAction{Title: fmt.Sprint(i, title)})
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "too slow") {
				t.Fatalf("slow client ended with %v", err)
			}
			if i < 3 {
				t.Fatalf("slow client dropped after %d titles of 1 MiB, under its 4 MiB bound", i+1)
			}
			if err := fast.Call("ping", nil, nil); err != nil {
				t.Fatalf("the other client was harmed: %v", err)
			}
			return
		default:
		}
		fast.WaitFor("title", func(envs []protocol.ActionEnvelope) bool {
			return countType("session/titleChanged", envs) == i+1
		})
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "too slow") {
			t.Fatalf("slow client ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client holding 8 MiB against a 4 MiB bound was not dropped")
	}
}

// TestInitializeDeadline checks that a connection that never initializes
// is closed with a reason, once InitializeTimeout has passed and not
// before, while one that did stays. The reason's kind is a policy
// violation, which a WebSocket transport sends as close status 1008 with
// the reason's text (jsonrpc's tests hold that part).
func TestInitializeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := startPipeHost(t, &host.Options{InitializeTimeout: 100 * time.Millisecond})
		good := th.dial(t, "good")
		good.initialize()
		hostEnd, idle := jsonrpc.Pipe()
		defer idle.Close()
		ended := make(chan error, 1)
		start := time.Now()
		go func() { ended <- th.h.ServeTransport(context.Background(), hostEnd) }()
		err := <-ended
		if !errors.Is(err, jsonrpc.ErrPolicyViolation) || !strings.Contains(err.Error(), "initialize") {
			t.Fatalf("idle connection ended with %v, want a policy violation naming initialize", err)
		}
		if waited := time.Since(start); waited < 100*time.Millisecond {
			t.Errorf("idle connection closed after %v, before its 100ms", waited)
		}
		if _, err := idle.Read(context.Background()); err == nil {
			t.Error("the idle client's end is still open")
		}
		if err := good.Call("ping", nil, nil); err != nil {
			t.Fatalf("an initialized connection was closed too: %v", err)
		}
	})
}

// logWatch is a slog handler that hands over every record's message and
// attributes as one line.
type logWatch struct{ lines chan string }

func (w logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w logWatch) WithGroup(string) slog.Handler            { return w }
func (w logWatch) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	select {
	case w.lines <- line:
	default:
	}
	return nil
}

// TestPingDropsDeadPeer checks that a client that keeps its TCP connection
// but no longer answers pings is dropped.
func TestPingDropsDeadPeer(t *testing.T) {
	logs := logWatch{make(chan string, 1000)}
	h, err := host.New(&host.Options{Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := httptest.NewServer(h.WebSocketHandler(&host.WebSocketOptions{PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond}))
	t.Cleanup(srv.Close)
	rawDial(t, "ws"+strings.TrimPrefix(srv.URL, "http")) // never reads, so never answers
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line := <-logs.lines:
			if strings.Contains(line, "did not answer a ping") {
				return
			}
		case <-timeout:
			t.Fatal("a peer that answers no ping was kept")
		}
	}
}
