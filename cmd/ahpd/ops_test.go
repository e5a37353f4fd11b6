package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveAhpd runs ahpd with args and returns its HTTP base URL; it stops
// when the test ends.
func serveAhpd(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--no-web"}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("ahpd did not stop")
		}
	})
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	ws, ok := strings.CutPrefix(strings.TrimSpace(line), "ahpd listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	ws, _, _ = strings.Cut(ws, "?") // the printed URL carries the token
	return "http" + strings.TrimSuffix(strings.TrimPrefix(ws, "ws"), "/")
}

func getWith(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitReady waits until ahpd's /readyz answers 200: its agents are probed
// on a goroutine of their own once it listens.
func waitReady(t *testing.T, base, token string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := getWith(t, base+"/readyz", token)
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %q after 10 s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOperatorEndpoints: /healthz, /readyz and /metrics answer behind the
// token, and without it from loopback only with --metrics-no-token.
func TestOperatorEndpoints(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	t.Run("token", func(t *testing.T) {
		base := serveAhpd(t, "--token", "tok")
		waitReady(t, base, "tok")
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			if code, _ := getWith(t, base+p, ""); code != http.StatusUnauthorized {
				t.Errorf("%s without the token answered %d", p, code)
			}
		}
		if code, body := getWith(t, base+"/healthz", "tok"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("/healthz answered %d %q", code, body)
		}
		if code, body := getWith(t, base+"/readyz", "tok"); code != http.StatusOK || body != "ready\n" {
			t.Errorf("/readyz answered %d %q", code, body)
		}
		code, body := getWith(t, base+"/metrics", "tok")
		if code != http.StatusOK || !strings.Contains(body, "\nahpd_store_ok 1\n") || !strings.Contains(body, "ahpd_build_info{version=") {
			t.Errorf("/metrics answered %d:\n%s", code, body)
		}
	})
	t.Run("metrics-no-token", func(t *testing.T) {
		base := serveAhpd(t, "--token", "tok", "--metrics-no-token")
		waitReady(t, base, "tok")
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			if code, _ := getWith(t, base+p, ""); code != http.StatusOK {
				t.Errorf("%s from loopback without the token answered %d", p, code)
			}
		}
	})
}

func TestDebugAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"localhost:6060", true},
		{"[::1]:6060", true},
		{"0.0.0.0:6060", false},
		{":6060", false},
		{"192.0.2.1:6060", false},
		{"nonsense", false},
	} {
		_, err := parseConfig([]string{"--debug-addr", tc.addr}, io.Discard)
		if (err == nil) != tc.ok {
			t.Errorf("--debug-addr %s: err = %v", tc.addr, err)
		}
	}

	c := opsConfig{DebugAddr: "127.0.0.1:0"}
	stop, addr, err := c.debugServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	base := "http://" + addr.String()
	if code, body := getWith(t, base+"/debug/pprof/heap?debug=1", ""); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("heap profile: %d %.80q", code, body)
	}
	if code, _ := getWith(t, base+"/debug/pprof/goroutine?debug=1", ""); code != http.StatusOK {
		t.Errorf("goroutine profile: %d", code)
	}
	if code, _ := getWith(t, base+"/metrics", ""); code != http.StatusNotFound {
		t.Errorf("the debug server serves more than profiles: /metrics answered %d", code)
	}
}
