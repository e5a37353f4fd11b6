package vscodetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// relay forwards WebSocket messages between VS Code's bridge and the
// host, writing each message (cut to 2,000 bytes) to frames.log among the
// test's artifacts. The test puts it in front of the host only when
// AHP_VSCODE_FRAMES=1, to see what VS Code sends when something breaks.
//
// relayRewrite, when set, rewrites each message ("->" towards the host,
// "<-" towards VS Code); it is for trying things out by hand.
var relayRewrite func(dir string, b []byte) []byte

type relay struct {
	addr string
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.ArtifactDir(), "frames.log"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	logMsg := func(dir string, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(logf, "%s %s %.2000s\n", time.Now().Format("15:04:05.000"), dir, b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up, resp, err := websocket.Dial(r.Context(), "ws://"+target+r.URL.RequestURI(), &websocket.DialOptions{HTTPHeader: r.Header.Clone()})
		if err != nil {
			code := http.StatusBadGateway
			if resp != nil {
				code = resp.StatusCode
			}
			logMsg("!!", []byte(err.Error()))
			http.Error(w, err.Error(), code)
			return
		}
		down, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			up.CloseNow()
			return
		}
		up.SetReadLimit(-1)
		down.SetReadLimit(-1)
		wg.Add(1)
		defer wg.Done()
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		pipe := func(dir string, from, to *websocket.Conn) {
			defer ccancel()
			for {
				typ, b, err := from.Read(cctx)
				if err != nil {
					return
				}
				if relayRewrite != nil {
					b = relayRewrite(dir, b)
				}
				logMsg(dir, b)
				if err := to.Write(cctx, typ, b); err != nil {
					return
				}
			}
		}
		back := make(chan struct{})
		go func() {
			defer close(back)
			pipe("<-", up, down)
		}()
		pipe("->", down, up)
		up.CloseNow()
		down.CloseNow()
		<-back
	})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-served
		wg.Wait()
		logf.Close()
	})
	return &relay{addr: ln.Addr().String()}
}
