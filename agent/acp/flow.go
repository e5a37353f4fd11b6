package acp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Flow control between the agent's stdout and the ACP SDK.
//
// The SDK reads the agent's output on one goroutine and queues each
// notification for a second goroutine that decodes it and calls the
// client's SessionUpdate. Its queue holds 1024 notifications; when it is
// full the SDK closes the connection. Decoding a session/update costs
// several times what reading it does, so an agent that writes a long burst
// (a fast model, a replayed history) can fill the queue.
//
// flowReader sits between the pipe and the SDK and hands the SDK one line
// per Read. It counts the session/update lines it has handed over and the
// bridge counts the updates it has been given (done); while more than
// flowLimit are in between, Read waits. The agent then waits on its stdout
// pipe, which is the ordinary back-pressure of a pipe. The wait is bounded:
// should the two counts drift apart (a line that looked like an update and
// was not), a Read that has seen no progress for Options.FlowResync starts
// counting afresh rather than stall.
const flowLimit = 512

var (
	updateMethod = []byte(`"session/update"`)
	idMember     = []byte(`"id"`)
)

type flowReader struct {
	r    *bufio.Reader
	line []byte // the rest of the line being handed out
	// onBroken is called once, before Read returns the error, when the
	// agent writes what is not an ACP message; nil ignores it.
	onBroken func(error)
	broken   error
	resync   time.Duration // how long a Read waits for progress before counting afresh

	mu       sync.Mutex
	pending  int
	progress chan struct{} // signalled by done
}

func newFlowReader(r io.Reader, resync time.Duration) *flowReader {
	return &flowReader{r: bufio.NewReaderSize(r, 64<<10), resync: resync, progress: make(chan struct{}, 1)}
}

// maxLine is the longest line the SDK reads (its scanner's limit, less
// the newline).
const maxLine = 10<<20 - 1

// Read returns at most one line. A line that cannot be an ACP message (one
// that does not start with '{', or one longer than the SDK reads) ends the
// stream with an error that says so: the agent broke the protocol, and
// waiting for its answers would only wait out a timeout.
func (f *flowReader) Read(p []byte) (int, error) {
	if f.broken != nil {
		return 0, f.broken
	}
	if len(f.line) == 0 {
		line, err := f.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: copy it out whole, up to the
			// limit.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(long) <= maxLine {
				line, err = f.r.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > maxLine {
				return 0, f.fail(fmt.Errorf("the agent wrote a message of more than %d MiB on stdout, more than an ACP client reads", (maxLine+1)>>20))
			}
			line = long
		}
		if len(line) == 0 {
			return 0, err
		}
		if bad := notJSONRPC(line); bad {
			return 0, f.fail(fmt.Errorf("the agent wrote something other than ACP (JSON-RPC) on stdout: %s", quoteLine(line)))
		}
		if isUpdate(line) {
			f.admit()
		}
		f.line = line
	}
	n := copy(p, f.line)
	f.line = f.line[n:]
	return n, nil
}

// fail records that the stream is broken and why.
func (f *flowReader) fail(err error) error {
	f.broken = err
	if f.onBroken != nil {
		f.onBroken(err)
	}
	return err
}

// notJSONRPC reports whether a line cannot be a JSON-RPC message: it has
// something other than white space and does not start with an object.
func notJSONRPC(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) > 0 && t[0] != '{'
}

// quoteLine quotes the start of a line for a message.
func quoteLine(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	const max = 120
	if len(line) > max {
		return strconv.Quote(string(line[:max])) + "…"
	}
	return strconv.Quote(string(line))
}

// isUpdate reports whether a line is (most likely) a session/update
// notification: it names the method and has no id. A line that merely
// mentions the method in its data is miscounted, which the resync repairs.
func isUpdate(line []byte) bool {
	return bytes.Contains(line, updateMethod) && !bytes.Contains(line, idMember)
}

// admit counts one more update handed to the SDK, first waiting while too
// many are outstanding.
func (f *flowReader) admit() {
	f.mu.Lock()
	defer f.mu.Unlock()
	var timer *time.Timer
	for f.pending >= flowLimit {
		if timer == nil {
			timer = time.NewTimer(f.resync)
			defer timer.Stop()
		}
		f.mu.Unlock()
		select {
		case <-f.progress:
			f.mu.Lock()
			timer.Reset(f.resync)
		case <-timer.C:
			f.mu.Lock()
			f.pending = 0
		}
	}
	f.pending++
}

// done records that the bridge has been given one update.
func (f *flowReader) done() {
	f.mu.Lock()
	if f.pending > 0 {
		f.pending--
	}
	f.mu.Unlock()
	select {
	case f.progress <- struct{}{}:
	default:
	}
}

// drain waits until the bridge has been given every update handed to the
// SDK, or until timeout. The SDK delivers queued notifications after the
// connection has closed; an agent's last words before it exits must land
// before its exit is reported.
func (f *flowReader) drain(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		n := f.pending
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-f.progress:
		case <-deadline.C:
			return
		}
	}
}
