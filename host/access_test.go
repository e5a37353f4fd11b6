package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/host"
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
