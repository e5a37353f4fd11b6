package jsonrpc_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
)

// levelRecorder keeps the level and message of every record.
type levelRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *levelRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
	return nil
}
func (r *levelRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *levelRecorder) WithGroup(string) slog.Handler      { return r }

// TestNormalDisconnectLoggedAtDebug: a peer that closes the connection
// normally is not news: it is logged at debug level, not info.
func TestNormalDisconnectLoggedAtDebug(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			local, remote := tk.raw(t)
			rec := &levelRecorder{}
			c := jsonrpc.NewConn(local, nil, &jsonrpc.ConnOptions{Logger: slog.New(rec)})
			remote.Close()
			<-c.Done()
			c.Close()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			ended := 0
			for _, r := range rec.recs {
				if r.Message == "jsonrpc: connection ended" {
					ended++
					if r.Level != slog.LevelDebug {
						t.Errorf("a normal disconnect logged at %v", r.Level)
					}
				}
			}
			if ended != 1 {
				t.Errorf("%d records of the end, want 1", ended)
			}
		})
	}
}
