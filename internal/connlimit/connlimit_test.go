package connlimit_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/internal/connlimit"
)

// TestCap holds the cap's worth of idle connections open and checks that
// the next one is answered 503 with a reason, and that a closed one gives
// its slot back.
func TestCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := connlimit.New(2, nil)
	srv := &http.Server{
		Handler:     lim.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })),
		ConnContext: lim.ConnContext,
	}
	go srv.Serve(lim.Listener(ln))
	defer srv.Close()

	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	get := func(c net.Conn) (*http.Response, string) {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	waitOpen := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); lim.Open() != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", lim.Open(), n)
			}
		}
	}
	a, b := dial(), dial()
	waitOpen(2)
	resp, body := get(dial())
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "at most 2") || !resp.Close {
		t.Fatalf("over the cap: %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	if resp, body := get(a); resp.StatusCode != http.StatusOK {
		t.Fatalf("within the cap: %d %q", resp.StatusCode, body)
	}
	b.Close()
	waitOpen(1)
	if resp, body := get(dial()); resp.StatusCode != http.StatusOK {
		t.Fatalf("after a close: %d %q", resp.StatusCode, body)
	}
}
