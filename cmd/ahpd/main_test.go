package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ahpd.json")
	os.WriteFile(file, []byte(`{"listen":"127.0.0.1:9000","logLevel":"debug","replaySize":5}`), 0o600)
	cfg, err := parseConfig([]string{"--config", file, "--listen", "127.0.0.1:9001"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9001" || cfg.LogLevel != "debug" || cfg.ReplaySize != 5 {
		t.Fatalf("flags must win over the file, the file over defaults: %+v", cfg)
	}
	if _, err := parseConfig([]string{"--config", file + ".missing"}, io.Discard); err == nil {
		t.Fatal("a missing config file was accepted")
	}
	os.WriteFile(file, []byte(`{"lisen":"x"}`), 0o600)
	if _, err := parseConfig([]string{"--config", file}, io.Discard); err == nil {
		t.Fatal("an unknown config key was accepted")
	}
}

func TestRefusesPublicListenWithoutToken(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--listen", "127.0.0.1:0"}, true},
		{[]string{"--listen", "localhost:0", "--no-token"}, true},
		{[]string{"--listen", "[::1]:0", "--no-token"}, true},
		{[]string{"--listen", "0.0.0.0:7247", "--no-token"}, false},
		{[]string{"--listen", ":7247", "--no-token"}, false},
		{[]string{"--listen", "0.0.0.0:7247"}, true}, // the kept token
		{[]string{"--listen", "0.0.0.0:7247", "--token", "s3cret"}, true},
		{[]string{"--no-token", "--token", "s3cret"}, false},
		{[]string{"--log-level", "loud"}, false},
		{[]string{"extra"}, false},
	} {
		_, err := parseConfig(tc.args, io.Discard)
		if (err == nil) != tc.ok {
			t.Errorf("%v: err = %v", tc.args, err)
		}
	}
	t.Setenv("AHPD_TOKEN", "from-env")
	if cfg, err := parseConfig([]string{"--listen", "0.0.0.0:0"}, io.Discard); err != nil || cfg.Token != "from-env" {
		t.Fatalf("AHPD_TOKEN not used: %v", err)
	}
}

// TestRunPrintsURLAndServes starts ahpd on a free port, reads the URL from
// its first line of output, connects, and shuts it down.
func TestRunPrintsURLAndServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--token", "tok", "--log-level", "error"}, pw, io.Discard)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	// The first line carries the token in the query, so that the URL
	// can be given to any client as is.
	printed, ok := strings.CutPrefix(strings.TrimSpace(line), "ahpd listening on ")
	url, found := strings.CutSuffix(printed, "?token=tok")
	if !ok || !found || !strings.HasPrefix(url, "ws://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("first line %q", line)
	}
	// The second line links to the web client, with the token in the
	// fragment, which browsers never send to the server.
	line, err = out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	page := "http" + strings.TrimPrefix(url, "ws") + "#token=tok"
	if got := strings.TrimSpace(line); got != "web client at "+page {
		t.Fatalf("second line %q, want the web client at %s", line, page)
	}
	go io.Copy(io.Discard, out)
	dialCtx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if _, _, err := websocket.Dial(dialCtx, url, nil); err == nil {
		t.Fatal("connected without the token")
	}
	ws, _, err := websocket.Dial(dialCtx, url, &websocket.DialOptions{HTTPHeader: map[string][]string{"Authorization": {"Bearer tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	ws2, _, err := websocket.Dial(dialCtx, printed, nil)
	if err != nil {
		t.Fatalf("the printed URL: %v", err)
	}
	ws2.CloseNow()
	ws.Write(dialCtx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if _, msg, err := ws.Read(dialCtx); err != nil || !strings.Contains(string(msg), `"result":null`) {
		t.Fatalf("ping: %s %v", msg, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ahpd did not stop")
	}
	ws.CloseNow()
}

// TestHostNames checks that ahpd on loopback answers only to loopback
// names and those given with --allow-host: a page rebinding its own name
// to 127.0.0.1 is refused with 403.
func TestHostNames(t *testing.T) {
	dial := func(url, host string) int {
		// Each dial has its own safety net, apart from the time ahpd
		// takes to start, which a busy machine stretches to seconds.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Host: host, HTTPClient: &http.Client{Transport: &http.Transport{}}, HTTPHeader: http.Header{"Origin": {"http://" + host}}})
		if err == nil {
			ws.CloseNow()
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("%s: %v", host, err)
		}
		return resp.StatusCode
	}
	url := runAhpd(t, "--store", "memory")
	port := portOf(t, url)
	if got := dial(url, "evil.example:"+port); got != http.StatusForbidden {
		t.Fatalf("rebinding name: status %d, want 403", got)
	}
	if got := dial(url, "localhost:"+port); got != http.StatusSwitchingProtocols {
		t.Fatalf("localhost: status %d", got)
	}
	url = runAhpd(t, "--store", "memory", "--allow-host", "ahp.test")
	port = portOf(t, url)
	if got := dial(url, "ahp.test:"+port); got != http.StatusSwitchingProtocols {
		t.Fatalf("allowed name: status %d", got)
	}
	if got := dial(url, "evil.example:"+port); got != http.StatusForbidden {
		t.Fatalf("other name: status %d, want 403", got)
	}
	if _, err := parseConfig([]string{"--allow-host", "[bad"}, io.Discard); err == nil {
		t.Fatal("a malformed --allow-host pattern was accepted")
	}
}

// TestConnectionBounds checks that an idle keep-alive HTTP connection is
// closed after --http-idle-timeout, and that a connection over
// --max-connections is answered 503 with a reason.
func TestConnectionBounds(t *testing.T) {
	url := runAhpd(t, "--store", "memory", "--max-connections", "2", "--http-idle-timeout", "200ms")
	addr := "127.0.0.1:" + portOf(t, url)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.Close {
		t.Fatalf("the plain request closed the connection (%d); want keep-alive", resp.StatusCode)
	}
	start := time.Now()
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v after %v, want it closed", err, time.Since(start))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var held []*websocket.Conn
	for range 2 {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ws)
	}
	defer func() {
		for _, ws := range held {
			ws.CloseNow()
		}
	}()
	_, resp, err = websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("over the cap: %v %v, want 503", err, resp)
	}
	if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), "too many connections") {
		t.Fatalf("503 without a reason: %q", body)
	}
}

// portOf is the port of a URL ahpd printed.
func portOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil || u.Port() == "" {
		t.Fatalf("ahpd printed %q: %v", raw, err)
	}
	return u.Port()
}
