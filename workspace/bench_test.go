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

// BenchmarkPagedRead reads a 100 MB file through ahpd in 1 MiB pages over
// a real WebSocket and reports the peak heap above the idle heap (host and
// client together, in one process). The baseline, measured in the same
// run, is reading the same file whole with os.ReadFile.
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
	srv := startHost(b, nil, &workspace.Options{Roots: []string{dir}, MaxReadBytes: 1 << 20})
	c := srv.Dial(b, "bench")
	initialize(b, c)
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
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.SetBytes(size)
	})
	for _, page := range []int64{256 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("paged-%dKiB", page>>10), func(b *testing.B) {
			var peak, idle0 uint64
			for b.Loop() {
				runtime.GC()
				idle := heapNow()
				idle0 = idle
				w := watchHeap()
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
				peak = max(peak, w.end()-idle)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(idle0)/(1<<20), "idle-heap-MB")
			b.SetBytes(size)
		})
	}
}

func rangeMetaLen(off, n int64) map[string]jsontext.Value {
	return map[string]jsontext.Value{workspace.RangeMetaKey: jsontext.Value(fmt.Sprintf(`{"offset":%d,"length":%d}`, off, n))}
}
