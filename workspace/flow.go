package workspace

import (
	"sync"
	"time"
)

// Flow control for terminal output. A process can print faster than a
// subscriber takes its output; the host queues what a subscriber has not
// taken, and drops a subscriber whose queue overflows. A terminal would
// rather wait for a subscriber that is slow but reading (as a terminal
// emulator stops reading its PTY while it cannot keep up, which pauses
// the process): when the slowest subscriber is more than backlogHigh
// behind, the terminal stops reading its PTY until that subscriber is
// back within backlogLow, for up to maxPause. A subscriber that has not
// caught up by then is not waited for again until it has, so one that
// stopped reading costs the others one pause, and is dropped when its
// queue overflows, as before.
const (
	backlogHigh = 4 << 20
	backlogLow  = 1 << 20
	maxPause    = 2 * time.Second
	backlogPoll = 2 * time.Millisecond
)

// flow holds back a terminal's output while its slowest subscriber is far
// behind. It is used by the terminal's output goroutine only; end may be
// called from any goroutine.
type flow struct {
	backlog func() int64 // how far the slowest subscriber is behind, in bytes
	stop    chan struct{}
	once    sync.Once
	gaveUp  bool // the last pause ran out; no pause until the backlog is low
}

func newFlow(backlog func() int64) *flow {
	return &flow{backlog: backlog, stop: make(chan struct{})}
}

// wait returns once the output may go on.
func (f *flow) wait() {
	b := f.backlog()
	if f.gaveUp {
		f.gaveUp = b >= backlogLow
		return
	}
	if b <= backlogHigh {
		return
	}
	timer := time.NewTimer(backlogPoll)
	defer timer.Stop()
	end := time.Now().Add(maxPause)
	for b > backlogLow {
		if !time.Now().Before(end) {
			f.gaveUp = true
			return
		}
		select {
		case <-f.stop:
			return
		case <-timer.C:
			timer.Reset(backlogPoll)
		}
		b = f.backlog()
	}
}

// end stops any pause for good: the terminal is going away.
func (f *flow) end() { f.once.Do(func() { close(f.stop) }) }
