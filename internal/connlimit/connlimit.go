// Package connlimit caps the connections an HTTP server holds open, and
// answers those over the cap with 503 and a reason instead of leaving
// them waiting in the kernel's accept queue.
//
// A Limiter counts every accepted connection until it is closed, whether
// it is an idle keep-alive connection, a request in progress or a
// connection hijacked for WebSocket. A connection accepted while the cap
// is reached is still served, but its requests get 503 Service
// Unavailable with "Connection: close", so the client hears why and the
// descriptor is given back at once.
//
// Use it on both sides of an http.Server:
//
//	lim := connlimit.New(1000, logger)
//	srv := &http.Server{Handler: lim.Handler(h), ConnContext: lim.ConnContext}
//	srv.Serve(lim.Listener(ln))
package connlimit

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter counts open connections against a cap. Its methods are safe for
// concurrent use.
type Limiter struct {
	max  int64
	log  *slog.Logger
	open atomic.Int64

	mu        sync.Mutex
	lastWarn  time.Time
	refused   int64 // refusals since lastWarn
	warnEvery time.Duration
}

// New returns a Limiter allowing max open connections; max <= 0 means no
// cap. Refusals are logged at WARN at most once every 10 s, with how many
// there were.
func New(max int, log *slog.Logger) *Limiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{max: int64(max), log: log, warnEvery: 10 * time.Second}
}

// Open returns how many connections are open.
func (l *Limiter) Open() int { return int(l.open.Load()) }

// Listener wraps ln so that the Limiter counts its connections.
func (l *Limiter) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, l: l} }

// ConnContext is for http.Server.ConnContext: it records in the
// connection's context whether the connection is over the cap.
func (l *Limiter) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*conn); ok && cc.over {
		return context.WithValue(ctx, overKey{}, true)
	}
	return ctx
}

// Handler answers requests on connections over the cap with 503 and
// passes the others to next.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if over, _ := r.Context().Value(overKey{}).(bool); over {
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "5")
			http.Error(w, fmt.Sprintf("too many connections: this host serves at most %d at once; try again later", l.max), http.StatusServiceUnavailable)
			l.noteRefusal(r.RemoteAddr)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// noteRefusal logs refusals, at most one line per warnEvery.
func (l *Limiter) noteRefusal(remote string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused++
	if now := time.Now(); now.Sub(l.lastWarn) >= l.warnEvery {
		l.log.Warn("refusing connections: the connection limit is reached (--max-connections)", "limit", l.max, "refused", l.refused, "last", remote)
		l.lastWarn, l.refused = now, 0
	}
}

type overKey struct{}

type listener struct {
	net.Listener
	l *Limiter
}

func (ln *listener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := ln.l.open.Add(1)
	return &conn{Conn: c, l: ln.l, over: ln.l.max > 0 && n > ln.l.max}, nil
}

// conn gives its slot back when closed, once.
type conn struct {
	net.Conn
	l      *Limiter
	over   bool
	closed atomic.Bool
}

func (c *conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return c.Conn.Close()
}
