package workspace_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/terminal"
)

// BenchmarkTerminalFanout runs a command printing 10 MB on a PTY and
// delivers it through ahpd, over real WebSockets, to 10 subscribers. Each
// subscriber must receive every byte. The baseline, measured in the same
// run, reads the same command's output straight from the PTY. The peak
// heap (host and the 10 clients, one process) is reported too.
func BenchmarkTerminalFanout(b *testing.B) {
	const size = 10 << 20
	// 10 MB of printable lines, so no byte is transformed by the PTY.
	script := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' 'x' | fold -w 99; exit 0", size/100*99)
	want := int64(size / 100 * 100) // 99 x's and CR LF per line, minus the LF→CRLF
	_ = want

	b.Run("baseline=pty", func(b *testing.B) {
		for b.Loop() {
			var n atomic.Int64
			p, err := terminal.Start(terminal.Spec{Command: []string{"/bin/sh", "-c", script}, Dir: b.TempDir()}, func(ev terminal.Event) {
				if ev.Kind == terminal.Output {
					n.Add(int64(strings.Count(ev.Data, "x")))
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			<-p.Done()
			if got := n.Load(); got != size/100*99 {
				b.Fatalf("read %d x's", got)
			}
		}
		b.SetBytes(size)
	})
	b.Run("ahpd-10-subscribers", func(b *testing.B) {
		dir := b.TempDir()
		srv := startHost(b, nil, &workspace.Options{Roots: []string{dir}, Shell: []string{"/bin/sh"}})
		owner := srv.Dial(b, "owner")
		initialize(b, owner)
		subs := make([]*hosttest.Client, 10)
		for i := range subs {
			subs[i] = srv.Dial(b, fmt.Sprintf("sub%d", i))
			initialize(b, subs[i])
		}
		var peak atomic.Uint64
		for i := 0; b.Loop(); i++ {
			uri := fmt.Sprintf("ahp-terminal:/bench-%d", i)
			owner.Must("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "owner"}}, nil)
			var wg sync.WaitGroup
			counts := make([]atomic.Int64, len(subs))
			exited := make([]chan struct{}, len(subs))
			for j, c := range subs {
				exited[j] = make(chan struct{})
				var once sync.Once
				c.Watch(func(e *protocol.ActionEnvelope) {
					if e.Channel != uri {
						return
					}
					switch a := e.Action.(type) {
					case *protocol.TerminalDataAction:
						counts[j].Add(int64(strings.Count(a.Data, "x")))
					case *protocol.TerminalExitedAction:
						once.Do(func() { close(exited[j]) })
					}
				})
				snap := c.Subscribe(uri).State.(*protocol.TerminalState)
				_ = snap
			}
			runtime.GC()
			idle := heapNow()
			stop := make(chan struct{})
			wg.Go(func() {
				t := time.NewTicker(2 * time.Millisecond)
				defer t.Stop()
				for {
					if h := heapNow(); h > idle && h-idle > peak.Load() {
						peak.Store(h - idle)
					}
					select {
					case <-stop:
						return
					case <-t.C:
					}
				}
			})
			owner.Dispatch(uri, &protocol.TerminalInputAction{Data: script + "\n"})
			for j := range subs {
				select {
				case <-exited[j]:
				case <-time.After(2 * time.Minute):
					b.Fatalf("subscriber %d saw no exit; %d x's", j, counts[j].Load())
				}
			}
			close(stop)
			wg.Wait()
			for j := range subs {
				// The command line's own echo holds no run of x's; only
				// the output counts.
				if got := counts[j].Load(); got < size/100*99 {
					b.Fatalf("subscriber %d got %d of %d x's", j, got, size/100*99)
				}
			}
			owner.Must("disposeTerminal", &protocol.DisposeTerminalParams{Channel: uri}, nil)
		}
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		b.SetBytes(size)
	})
}
