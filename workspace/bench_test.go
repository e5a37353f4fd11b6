package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// heapWatch samples the live heap until stopped and keeps the peak.
type heapWatch struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func heapNow() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func watchHeap() *heapWatch {
	w := &heapWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapNow(); h > w.peak.Load() {
				w.peak.Store(h)
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *heapWatch) end() uint64 { close(w.stop); <-w.done; return w.peak.Load() }

// BenchmarkPagedRead reads a 100 MB file through a host in 1 MiB and
// 256 KiB pages over a real WebSocket, and reports the host's peak heap
// above its idle heap. The host runs in a process of its own (see
// startHostProcess), so the client's allocations do not count. The
// baseline, measured in the same run, is reading the same file whole with
// os.ReadFile, in this process.
func BenchmarkPagedRead(b *testing.B) {
	const size = 100 << 20
	dir := b.TempDir()
	path := filepath.Join(dir, "big")
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i*31 + i>>8)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for range size / len(block) {
		f.Write(block)
	}
	f.Close()
	uri := files.URIOf(path)

	b.Run("baseline=os.ReadFile", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			runtime.GC()
			idle := heapNow()
			w := watchHeap()
			data, err := os.ReadFile(path)
			if err != nil || len(data) != size {
				b.Fatal(err)
			}
			peak = max(peak, w.end()-idle)
			runtime.KeepAlive(data)
		}
		b.ReportMetric(mb(peak), "peak-heap-MB")
		b.SetBytes(size)
	})
	for _, page := range []int64{256 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("paged-%dKiB", page>>10), func(b *testing.B) {
			hp := startHostProcess(b, &workspace.Options{Roots: []string{dir}, MaxReadBytes: 1 << 20})
			c := hosttest.Dial(b, hp.URL, "bench")
			initialize(b, c)
			var peak, idle, cpu, allocs uint64
			for b.Loop() {
				hp.mark(b)
				var total int64
				for off := int64(0); ; {
					var rr readResult
					if err := c.RPC.Call(context.Background(), "resourceRead", &protocol.ResourceReadParams{URI: uri, Meta: rangeMetaLen(off, page)}, &rr); err != nil {
						b.Fatal(err)
					}
					m := rr.Meta[workspace.RangeMetaKey]
					total += m.Length
					off += m.Length
					if m.EOF {
						break
					}
				}
				if total != size {
					b.Fatalf("read %d bytes", total)
				}
				fig := hp.figures(b)
				peak, idle = max(peak, fig.Peak-fig.Idle), fig.Idle
				cpu += uint64(fig.CPU)
				allocs += fig.Allocs
			}
			b.ReportMetric(mb(peak), "peak-heap-MB")
			b.ReportMetric(mb(idle), "idle-heap-MB")
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "host-cpu-ms/op")
			b.ReportMetric(mb(allocs)/float64(b.N), "host-alloc-MB/op")
			b.SetBytes(size)
		})
	}
}

func rangeMetaLen(off, n int64) map[string]jsontext.Value {
	return map[string]jsontext.Value{workspace.RangeMetaKey: jsontext.Value(fmt.Sprintf(`{"offset":%d,"length":%d}`, off, n))}
}
