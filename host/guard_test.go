package host_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ahp-go/ahp/host"
)

// TestGuard: the plain HTTP endpoints follow the WebSocket endpoint's
// rules for host names, the token and browser origins, and the loopback
// exemption lets only loopback addresses through without the token.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	withToken := &host.WebSocketOptions{Token: "s3cret"}
	for _, tc := range []struct {
		name   string
		opts   *host.WebSocketOptions
		g      host.GuardOptions
		host   string
		remote string
		auth   string
		origin string
		want   int
	}{
		{"loopback, no token set", nil, host.GuardOptions{}, "127.0.0.1:7247", "127.0.0.1:5000", "", "", http.StatusTeapot},
		{"rebound name", nil, host.GuardOptions{}, "evil.example:7247", "127.0.0.1:5000", "", "", http.StatusForbidden},
		{"allowed name", &host.WebSocketOptions{AllowedHosts: []string{"box.lan"}}, host.GuardOptions{}, "box.lan:7247", "192.0.2.1:5000", "", "", http.StatusTeapot},
		{"token missing", withToken, host.GuardOptions{}, "localhost:7247", "127.0.0.1:5000", "", "", http.StatusUnauthorized},
		{"token wrong", withToken, host.GuardOptions{}, "localhost:7247", "127.0.0.1:5000", "Bearer nope", "", http.StatusUnauthorized},
		{"token right", withToken, host.GuardOptions{}, "localhost:7247", "127.0.0.1:5000", "Bearer s3cret", "", http.StatusTeapot},
		{"loopback exempt", withToken, host.GuardOptions{LoopbackWithoutToken: true}, "localhost:7247", "127.0.0.1:5000", "", "", http.StatusTeapot},
		{"loopback exempt, IPv6", withToken, host.GuardOptions{LoopbackWithoutToken: true}, "[::1]:7247", "[::1]:5000", "", "", http.StatusTeapot},
		{"exemption is for loopback only", &host.WebSocketOptions{Token: "s3cret", AnyHost: true}, host.GuardOptions{LoopbackWithoutToken: true}, "box.lan:7247", "192.0.2.1:5000", "", "", http.StatusUnauthorized},
		{"exemption keeps the host check", withToken, host.GuardOptions{LoopbackWithoutToken: true}, "evil.example:7247", "127.0.0.1:5000", "", "", http.StatusForbidden},
		{"foreign origin", nil, host.GuardOptions{}, "localhost:7247", "127.0.0.1:5000", "", "https://evil.example", http.StatusForbidden},
		{"own origin", nil, host.GuardOptions{}, "localhost:7247", "127.0.0.1:5000", "", "http://localhost:7247", http.StatusTeapot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/metrics", nil)
			r.Host = tc.host
			r.RemoteAddr = tc.remote
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			w := httptest.NewRecorder()
			host.Guard(tc.opts, tc.g, ok).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("answered %d, want %d (%s)", w.Code, tc.want, w.Body)
			}
		})
	}
}
