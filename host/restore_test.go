package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store/sqlite"
)

// TestStoreTruncatedAndRestored truncates the write-ahead log and the
// database under a running host: the host stops acknowledging changes and
// refuses new work, and after a restart every session acknowledged before
// the last backup is served again, from the backup the store restored.
func TestStoreTruncatedAndRestored(t *testing.T) {
	for _, damage := range []string{"wal", "db", "both"} {
		t.Run(damage, func(t *testing.T) {
			var logs syncbuf.Buffer
			dir := t.TempDir()
			opts := &sqlite.Options{BackupInterval: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			st, err := sqlite.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			th := startHost(t, &host.Options{Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := th.dial(t, "a")
			c.initialize()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var kept []string
			for i := range 5 {
				uri, _ := c.newSession(fmt.Sprintf("kept-%d", i))
				kept = append(kept, uri)
			}
			if err := th.h.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Backup(ctx); err != nil {
				t.Fatal(err)
			}
			c.newSession("after-the-backup")
			if err := th.h.Sync(ctx); err != nil {
				t.Fatal(err)
			}

			db := filepath.Join(dir, sqlite.DBFile)
			if damage != "db" {
				os.Truncate(db+"-wal", 0)
			}
			if damage != "wal" {
				os.Truncate(db, 0)
			}
			// The next change is not acknowledged, and from then on the
			// host refuses new work, saying why.
			c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("unsaved")}, nil)
			if err := th.h.Sync(ctx); err == nil || !strings.Contains(err.Error(), "truncated") {
				t.Fatalf("Sync after the damage: %v", err)
			}
			err = c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("refused")}, nil)
			if err == nil || !strings.Contains(err.Error(), "cannot save changes") {
				t.Fatalf("createSession after the damage: %v", err)
			}
			if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "truncated") {
				t.Fatalf("the damage is not logged:\n%s", logs.String())
			}
			th.h.Close()
			st.Close()

			st2, err := sqlite.Open(dir, opts)
			if err != nil {
				t.Fatalf("restart: %v\n%s", err, logs.String())
			}
			defer st2.Close()
			if !strings.Contains(logs.String(), "restored from its backup") {
				t.Fatalf("the restore is not logged:\n%s", logs.String())
			}
			th2 := startHost(t, &host.Options{Store: st2})
			c2 := th2.dial(t, "b")
			c2.initialize()
			served := map[string]bool{}
			for _, s := range list(c2) {
				served[s.Resource] = true
			}
			for _, uri := range kept {
				if !served[uri] {
					t.Fatalf("%s, acknowledged before the backup, is not served after the restart (catalog: %v)", uri, served)
				}
				c2.Subscribe(uri)
			}
		})
	}
}
