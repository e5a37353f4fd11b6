package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// A client watches a folder of its session and sees a change made outside
// ahpd; the watch goes when its last subscriber leaves.
func TestResourceWatchOverWebSocket(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
	srv := startHost(t, nil, nil)
	a, b := srv.Dial(t, "a"), srv.Dial(t, "b")
	initialize(t, a)
	initialize(t, b)
	createSession(t, a, "s1", dir)

	// Outside the scope: PermissionDenied.
	err := a.Call("createResourceWatch", &protocol.CreateResourceWatchParams{URI: files.URIOf(os.TempDir())}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied {
		t.Fatalf("watch outside: %v", e)
	}
	var res protocol.CreateResourceWatchResult
	a.Must("createResourceWatch", &protocol.CreateResourceWatchParams{URI: files.URIOf(dir), Recursive: protocol.Ptr(true),
		Excludes: &protocol.CreateResourceWatchParamsExcludes{Items: []string{"**/*.log"}}}, &res)
	if !strings.HasPrefix(res.Channel, "ahp-resource-watch:/") {
		t.Fatalf("channel %q", res.Channel)
	}
	st := a.Subscribe(res.Channel).State.(*protocol.ResourceWatchState)
	if st.Root != files.URIOf(dir) || !st.Recursive || st.Excludes == nil {
		t.Fatalf("watch state %+v", st)
	}
	b.Subscribe(res.Channel)
	must(t, os.WriteFile(filepath.Join(dir, "src", "a.log"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("x"), 0o644))
	want := files.URIOf(filepath.Join(dir, "src", "main.go"))
	for _, c := range []*hosttest.Client{a, b} {
		envs := c.WaitFor("the change", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if ch, ok := e.Action.(*protocol.ResourceWatchChangedAction); ok {
					for _, it := range ch.Changes.Items {
						if it.URI == want && it.Type == protocol.ResourceChangeTypeAdded {
							return true
						}
					}
				}
			}
			return false
		})
		for _, e := range envs {
			if ch, ok := e.Action.(*protocol.ResourceWatchChangedAction); ok {
				if len(ch.Changes.Items) == 0 {
					t.Fatal("an empty batch")
				}
				for _, it := range ch.Changes.Items {
					if strings.HasSuffix(it.URI, ".log") {
						t.Fatalf("excluded change %s", it.URI)
					}
				}
			}
		}
	}
	// The last subscriber leaving (one unsubscribes, one disconnects)
	// releases the watch and its channel.
	a.RPC.Notify(t.Context(), "unsubscribe", &protocol.UnsubscribeParams{Channel: res.Channel})
	waitUntil(t, "a's unsubscribe", func() bool { return subscribers(srv, res.Channel) == 1 })
	if srv.Host.State(res.Channel) == nil {
		t.Fatal("released with a subscriber left")
	}
	b.RPC.Close()
	waitUntil(t, "the watch released", func() bool { return srv.Host.State(res.Channel) == nil })
}
