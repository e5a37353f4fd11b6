package web_test

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
	"github.com/go-json-experiment/json"
)

// taskTrace records the tasks of the page's main thread with Chrome's
// tracing, to tell how long each task ran on the CPU. Wall-clock measures
// (the page's long tasks) also count the time the thread waited for a CPU
// on a busy machine; the thread time of a task is what the page itself
// costs.
type taskTrace struct {
	b      *browser
	mu     sync.Mutex
	events []traceEvent
	done   chan struct{}
}

type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Pid  int64   `json:"pid"`
	Tid  int64   `json:"tid"`
	Dur  float64 `json:"dur"`
	TDur float64 `json:"tdur"`
	Args struct {
		Name string `json:"name"`
	} `json:"args"`
}

func startTrace(b *browser) *taskTrace {
	b.t.Helper()
	tr := &taskTrace{b: b, done: make(chan struct{})}
	err := chromedp.ListenBrowser(b.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *tracing.EventDataCollected:
			tr.mu.Lock()
			defer tr.mu.Unlock()
			for _, raw := range ev.Value {
				// Only tasks and thread names matter; skip decoding the rest.
				if !bytes.Contains(raw, []byte(`"RunTask"`)) && !bytes.Contains(raw, []byte(`"thread_name"`)) {
					continue
				}
				var e traceEvent
				if json.Unmarshal(raw, &e) == nil {
					tr.events = append(tr.events, e)
				}
			}
		case *tracing.EventTracingComplete:
			close(tr.done)
		}
	})
	if err != nil {
		b.t.Fatalf("listening for trace events: %v", err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	_, err = chromedp.CallBrowser(ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{IncludedCategories: []string{"disabled-by-default-devtools.timeline", "__metadata"}, ExcludedCategories: []string{"*"}},
	})
	if err != nil {
		b.t.Fatalf("starting the trace: %v", err)
	}
	return tr
}

// stop ends the trace and returns the longest task of the page's main
// thread, by thread time and by wall time, in milliseconds, and the
// number of tasks seen.
func (tr *taskTrace) stop() (cpu, wall float64, tasks int) {
	b := tr.b
	b.t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if _, err := chromedp.CallBrowser(ctx, tracing.End, cdp.Empty{}); err != nil {
		b.t.Fatalf("ending the trace: %v", err)
	}
	select {
	case <-tr.done:
	case <-ctx.Done():
		b.t.Fatalf("the trace did not complete in %v (%d events)", time.Since(began), tr.count())
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	b.t.Logf("trace: %d events, collected in %v", len(tr.events), time.Since(began).Round(time.Millisecond))
	type thread struct{ pid, tid int64 }
	mains := map[thread]bool{}
	for _, e := range tr.events {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			mains[thread{e.Pid, e.Tid}] = true
		}
	}
	for _, e := range tr.events {
		if e.Ph != "X" || !mains[thread{e.Pid, e.Tid}] {
			continue
		}
		if e.Name != "ThreadControllerImpl::RunTask" && e.Name != "RunTask" {
			continue
		}
		tasks++
		cpu = max(cpu, e.TDur/1000)
		wall = max(wall, e.Dur/1000)
	}
	return cpu, wall, tasks
}

func (tr *taskTrace) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.events)
}
