package host_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/syncbuf"
)

// TestDNSRebindingRefused checks the Host and Origin rules of the upgrade.
// A page that rebinds its own name (evil.example) to 127.0.0.1 makes the
// browser send "Host: evil.example:PORT" and a matching Origin: the
// endpoint must refuse it with 403, whatever the origin says, unless that
// name was allowed.
func TestDNSRebindingRefused(t *testing.T) {
	th := startHost(t, nil)
	type attempt struct {
		name   string
		host   string // "" keeps 127.0.0.1:PORT
		origin string // "" sends none; PORT is replaced
		status int    // 0 means the upgrade succeeds
	}
	for _, tc := range []struct {
		name     string
		opts     *host.WebSocketOptions
		attempts []attempt
	}{
		{"defaults", nil, []attempt{
			{"rebinding", "evil.example:PORT", "http://evil.example:PORT", http.StatusForbidden},
			{"rebinding without origin", "evil.example:PORT", "", http.StatusForbidden},
			{"rebinding with a trailing dot", "evil.example.:PORT", "", http.StatusForbidden},
			{"no port", "evil.example", "", http.StatusForbidden},
			{"loopback address", "", "", 0},
			{"localhost", "localhost:PORT", "", 0},
			{"localhost, own origin", "localhost:PORT", "http://localhost:PORT", 0},
			{"IPv6 loopback", "[::1]:PORT", "", 0},
			{"own loopback origin", "", "http://127.0.0.1:PORT", 0},
			{"cross-origin page", "", "http://evil.example", http.StatusForbidden},
			{"other loopback origin", "", "http://localhost:PORT", http.StatusForbidden},
			{"null origin", "", "null", http.StatusForbidden},
		}},
		{"allowed host", &host.WebSocketOptions{AllowedHosts: []string{"ahp.example", "*.lan"}}, []attempt{
			{"allowed name", "ahp.example:PORT", "", 0},
			{"allowed name, own origin", "ahp.example:PORT", "http://ahp.example:PORT", 0},
			{"pattern", "box.lan:PORT", "", 0},
			{"other name", "evil.example:PORT", "", http.StatusForbidden},
		}},
		{"any host", &host.WebSocketOptions{AnyHost: true, OriginPatterns: []string{"app.example"}}, []attempt{
			{"any name", "evil.example:PORT", "", 0},
			{"own origin is not trusted", "evil.example:PORT", "http://evil.example:PORT", http.StatusForbidden},
			{"allowed origin", "evil.example:PORT", "https://app.example", 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(th.h.WebSocketHandler(tc.opts))
			defer srv.Close()
			port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
			for _, a := range tc.attempts {
				t.Run(a.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					opts := &websocket.DialOptions{Host: strings.ReplaceAll(a.host, "PORT", port), HTTPClient: &http.Client{Transport: &http.Transport{}}, HTTPHeader: http.Header{}}
					if a.origin != "" {
						opts.HTTPHeader.Set("Origin", strings.ReplaceAll(a.origin, "PORT", port))
					}
					ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), opts)
					if ws != nil {
						ws.CloseNow()
					}
					switch {
					case a.status == 0 && err != nil:
						t.Fatalf("refused: %v", err)
					case a.status != 0 && err == nil:
						t.Fatalf("upgrade succeeded, want %d", a.status)
					case a.status != 0 && (resp == nil || resp.StatusCode != a.status):
						t.Fatalf("got %v, want %d", resp, a.status)
					}
				})
			}
		})
	}
}

// TestTokenInQuery checks that a browser, which cannot set headers on a
// WebSocket, can present the token as a query parameter: "tkn", as VS
// Code's remote agent host connection sends it, or "token" (the transport
// page lets hosts gate the handshake with query parameters). The token
// never reaches the log.
func TestTokenInQuery(t *testing.T) {
	var logs syncbuf.Buffer
	th := startHost(t, &host.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	const token = "s3cret-Tok"
	srv := httptest.NewServer(th.h.WebSocketHandler(&host.WebSocketOptions{Token: token}))
	defer srv.Close()
	base := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name   string
		query  string
		header http.Header
		ok     bool
	}{
		{"tkn", "?tkn=" + token, nil, true},
		{"token", "?token=" + token, nil, true},
		{"escaped", "?tkn=s3cret%2DTok", nil, true},
		{"among others", "?a=1&tkn=wrong-one&tkn=" + token, nil, true},
		{"wrong", "?tkn=wrong-one", nil, false},
		{"prefix", "?tkn=s3cret", nil, false},
		{"empty", "?tkn=", nil, false},
		{"other parameter", "?access_token=" + token, nil, false},
		{"wrong query, right header", "?tkn=wrong-one", http.Header{"Authorization": {"Bearer " + token}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, resp, err := websocket.Dial(ctx, base+tc.query, &websocket.DialOptions{HTTPHeader: tc.header, HTTPClient: &http.Client{Transport: &http.Transport{}}})
			if ws != nil {
				ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"nope"}`))
				ws.Read(ctx)
				ws.CloseNow()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("dial: %v", err)
			}
			if !tc.ok && (resp == nil || resp.StatusCode != http.StatusUnauthorized) {
				t.Fatalf("refusal %v, want 401", resp)
			}
		})
	}
	th.h.Close()
	if strings.Contains(logs.String(), "s3cret") || strings.Contains(logs.String(), "wrong-one") {
		t.Fatalf("a token reached the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "without a valid token") {
		t.Fatalf("refusals were not logged:\n%s", logs.String())
	}
}

// TestRefusalsLogBounded: refused upgrades are logged, but a page that
// retries them in a loop does not fill the log.
func TestRefusalsLogBounded(t *testing.T) {
	var logs syncbuf.Buffer
	th := startHost(t, &host.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv := httptest.NewServer(th.h.WebSocketHandler(nil))
	defer srv.Close()
	for range 50 {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Host = strings.Repeat("evil.example", 100)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if n := strings.Count(logs.String(), "refused a request naming a host"); n < 1 || n > 5 {
		t.Fatalf("%d log lines for 50 refusals:\n%s", n, logs.String())
	}
	if len(logs.String()) > 4<<10 {
		t.Fatalf("%d bytes of log for 50 refusals", len(logs.String()))
	}
}
