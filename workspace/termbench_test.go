package workspace_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// The terminal benchmark's output: numbered lines of lineLen bytes,
// "0000042xxx…x\n", which the PTY sends as lineLen+1 bytes (CR LF). A
// subscriber checks that every line arrives, in order, exactly once.
const (
	lineLen   = 100
	lineDigit = 7
)

func writeLines(tb testing.TB, path string, lines int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	line := bytes.Repeat([]byte{'x'}, lineLen)
	line[lineLen-1] = '\n'
	for i := range lines {
		strconv.AppendInt(line[:0], int64(i)+1e7, 10) // 8 digits, the first one dropped
		copy(line, line[1:lineDigit+1])
		line[lineDigit] = 'x'
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkTerminalFanout prints 10 MB and 100 MB (numbered lines, with
// cat) on a terminal of a host and delivers them over real WebSockets to
// 10 subscribers; MB/s is what each subscriber receives. The host runs in
// a process of its own and reports its CPU time, its allocations and its
// peak heap above its idle heap. The baseline, measured in the same run,
// reads the same cat's output straight from a bare PTY.
//
// The subscribers are bare WebSocket clients: they check their messages
// with a scanner of the action's JSON (falling back to the full decoder
// for any message of another shape), so that what the 10 of them cost on
// the machine's cores stays small beside the host's work.
func BenchmarkTerminalFanout(b *testing.B) {
	dir := b.TempDir()
	for _, size := range []int{10 << 20, 100 << 20} {
		lines := size / lineLen
		path := filepath.Join(dir, fmt.Sprintf("lines-%d", size))
		writeLines(b, path, lines)
		name := fmt.Sprintf("%dMB", size>>20)
		b.Run("baseline=pty/"+name, func(b *testing.B) {
			for b.Loop() {
				if n := barePTY(b, path); n != int64(lines*(lineLen+1)) {
					b.Fatalf("read %d bytes, want %d", n, lines*(lineLen+1))
				}
			}
			b.SetBytes(int64(size))
		})
		b.Run("ahpd-10-subscribers/"+name, func(b *testing.B) {
			terminalFanout(b, dir, path, lines, 10)
			b.SetBytes(int64(size))
		})
	}
}

// barePTY runs cat on a PTY and reads its output to the end.
func barePTY(tb testing.TB, path string) int64 {
	cmd := exec.Command("cat", path)
	f, err := pty.Start(cmd)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	n, err := io.CopyBuffer(io.Discard, f, make([]byte, 32<<10))
	if err != nil && !errors.Is(err, syscall.EIO) {
		tb.Fatal(err)
	}
	cmd.Wait()
	return n
}

func terminalFanout(b *testing.B, dir, path string, lines, subscribers int) {
	hp := startHostProcess(b, &workspace.Options{Roots: []string{dir}, Shell: []string{"/bin/sh"}})
	owner := hosttest.Dial(b, hp.URL, "owner")
	initialize(b, owner)
	const uri = "ahp-terminal:/bench"
	owner.Must("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "owner"}}, nil)
	// The typed command may be refused (the host refuses changes while
	// its store is far behind, say): that fails the run instead of
	// leaving it waiting for output that never comes.
	rejected := make(chan string, 1)
	owner.Watch(func(e *protocol.ActionEnvelope) {
		if e.Channel == uri && e.RejectionReason != nil {
			select {
			case rejected <- *e.RejectionReason:
			default:
			}
		}
	})
	subs := make([]*rawSubscriber, subscribers)
	for i := range subs {
		subs[i] = dialRawSubscriber(b, hp.URL, fmt.Sprintf("sub%d", i), uri)
	}
	var peak, idle, cpu, allocs uint64
	var clients time.Duration
	for b.Loop() {
		b.StopTimer()
		for _, s := range subs {
			s.expect(lines)
		}
		hp.mark(b)
		cpu0 := cpuTime()
		b.StartTimer()
		owner.Dispatch(uri, &protocol.TerminalInputAction{Data: "cat " + path + "\n"})
		for i, s := range subs {
			select {
			case err := <-s.done:
				if err != nil {
					b.Fatalf("subscriber %d: %v", i, err)
				}
			case reason := <-rejected:
				b.Fatalf("the command was refused: %s", reason)
			case <-time.After(5 * time.Minute):
				b.Fatalf("subscriber %d: %d of %d lines after 5 minutes", i, s.got(), lines)
			}
		}
		b.StopTimer()
		clients += cpuTime() - cpu0
		f := hp.figures(b)
		peak, idle = max(peak, f.Peak-f.Idle), f.Idle
		cpu += uint64(f.CPU)
		allocs += f.Allocs
		b.StartTimer()
	}
	b.ReportMetric(mb(peak), "peak-heap-MB")
	b.ReportMetric(mb(idle), "idle-heap-MB")
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "host-cpu-ms/op")
	b.ReportMetric(mb(allocs)/float64(b.N), "host-alloc-MB/op")
	b.ReportMetric(float64(clients.Milliseconds())/float64(b.N), "clients-cpu-ms/op")
}

// rawSubscriber is a WebSocket client that initializes, subscribes to one
// terminal and checks the numbered lines its terminal/data actions carry.
type rawSubscriber struct {
	ws      *websocket.Conn
	channel string
	fast    []byte // what a terminal/data envelope of the channel starts with
	replies chan []byte

	mu      sync.Mutex
	lines   int // lines expected in this round; 0 between rounds
	next    int // the next line number to see
	line    []byte
	lastSeq int64
	done    chan error
}

func dialRawSubscriber(tb testing.TB, url, clientID, channel string) *rawSubscriber {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.Timeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	s := &rawSubscriber{
		ws:      ws,
		channel: channel,
		fast:    []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"` + channel + `","action":{"type":"terminal/data","data":"`),
		replies: make(chan []byte, 4),
		line:    make([]byte, 0, 256),
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.readLoop()
	}()
	tb.Cleanup(func() {
		ws.Close(websocket.StatusNormalClosure, "")
		<-readDone
	})
	s.call(tb, 1, "initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: clientID})
	s.call(tb, 2, "subscribe", &protocol.SubscribeParams{Channel: channel})
	return s
}

// call sends a request and waits for its reply.
func (s *rawSubscriber) call(tb testing.TB, id int64, method string, params any) {
	tb.Helper()
	body, err := protocol.Marshal(params)
	if err != nil {
		tb.Fatal(err)
	}
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, body)
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.Timeout)
	defer cancel()
	if err := s.ws.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
		tb.Fatal(err)
	}
	select {
	case r := <-s.replies:
		var resp protocol.Response
		if err := protocol.Unmarshal(r, &resp); err != nil {
			tb.Fatal(err)
		}
		if resp.Error != nil || resp.ID != protocol.Int64ID(id) {
			tb.Fatalf("%s: %s", method, r)
		}
	case <-ctx.Done():
		tb.Fatalf("%s: no reply", method)
	}
}

// expect starts a round: the next lines numbered lines must arrive.
func (s *rawSubscriber) expect(lines int) {
	s.mu.Lock()
	s.lines, s.next, s.line = lines, 0, s.line[:0]
	s.done = make(chan error, 1)
	s.mu.Unlock()
}

func (s *rawSubscriber) got() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *rawSubscriber) readLoop() {
	buf := make([]byte, 0, 1<<20)
	for {
		_, r, err := s.ws.Reader(context.Background())
		if err != nil {
			s.mu.Lock()
			s.failIf(fmt.Errorf("reading: %w", err)) // a round cut short fails at once
			s.mu.Unlock()
			return
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				s.mu.Lock()
				s.failIf(fmt.Errorf("reading: %w", err))
				s.mu.Unlock()
				return
			}
		}
		switch {
		case bytes.HasPrefix(buf, s.fast):
			s.mu.Lock()
			err := s.fastData(buf[len(s.fast):])
			if errors.Is(err, errNotFast) {
				err = s.slowAction(buf)
			}
			s.failIf(err)
			s.mu.Unlock()
		case bytes.HasPrefix(buf, []byte(`{"jsonrpc":"2.0","method":"action",`)):
			s.mu.Lock()
			s.failIf(s.slowAction(buf))
			s.mu.Unlock()
		case bytes.HasPrefix(buf, []byte(`{"jsonrpc":"2.0","id":`)):
			s.replies <- bytes.Clone(buf)
		}
	}
}

var errNotFast = errors.New("not of the usual shape")

// fastData checks the data of a terminal/data envelope of the usual
// shape: msg is what follows the data string's opening quote.
func (s *rawSubscriber) fastData(msg []byte) error {
	i := 0
	for i < len(msg) {
		j := bytes.IndexAny(msg[i:], `"\\`)
		if j < 0 {
			return errNotFast
		}
		if err := s.feed(msg[i : i+j]); err != nil {
			return err
		}
		i += j
		if msg[i] == '"' {
			break
		}
		if i+1 >= len(msg) {
			return errNotFast
		}
		i++
		var c byte
		switch msg[i] {
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case '"', '\\', '/':
			c = msg[i]
		case 'u':
			if i+4 >= len(msg) {
				return errNotFast
			}
			v, err := strconv.ParseUint(string(msg[i+1:i+5]), 16, 16)
			if err != nil || v >= 0x80 {
				return errNotFast
			}
			c, i = byte(v), i+4
		default:
			return errNotFast
		}
		i++
		if err := s.feed([]byte{c}); err != nil {
			return err
		}
	}
	if i >= len(msg) {
		return errNotFast
	}
	rest, ok := bytes.CutPrefix(msg[i:], []byte(`"},"serverSeq":`))
	if !ok {
		return errors.New("a terminal/data envelope without serverSeq after its action")
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return errors.New("a bad serverSeq")
	}
	seq, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return err
	}
	return s.sequenced(seq)
}

// slowAction decodes an action notification in full.
func (s *rawSubscriber) slowAction(msg []byte) error {
	var n struct {
		Params protocol.ActionEnvelope `json:"params"`
	}
	if err := protocol.Unmarshal(msg, &n); err != nil {
		return err
	}
	if n.Params.Channel != s.channel {
		return nil
	}
	if err := s.sequenced(n.Params.ServerSeq); err != nil {
		return err
	}
	switch a := n.Params.Action.(type) {
	case *protocol.TerminalDataAction:
		if err := s.feed([]byte(a.Data)); err != nil {
			return err
		}
	case *protocol.TerminalExitedAction:
		if s.lines > 0 {
			return fmt.Errorf("the terminal exited after %d of %d lines", s.next, s.lines)
		}
	}
	return nil
}

func (s *rawSubscriber) sequenced(seq int64) error {
	if seq <= s.lastSeq {
		return fmt.Errorf("serverSeq %d after %d", seq, s.lastSeq)
	}
	s.lastSeq = seq
	return nil
}

// feed takes the next bytes of output.
func (s *rawSubscriber) feed(out []byte) error {
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			s.line = append(s.line, out[:min(len(out), cap(s.line)-len(s.line))]...)
			return nil
		}
		s.line = append(s.line, out[:min(i, cap(s.line)-len(s.line))]...)
		out = out[i+1:]
		line := bytes.TrimSuffix(s.line, []byte{'\r'})
		s.line = s.line[:0]
		if s.lines == 0 || (s.next == 0 && !numbered(line, 0)) {
			continue // between rounds, or the command's echo
		}
		if !numbered(line, s.next) {
			return fmt.Errorf("line %d: got %q", s.next, line)
		}
		s.next++
		if s.next == s.lines {
			s.lines = 0
			s.done <- nil
		}
	}
	return nil
}

// failIf ends the round with err.
func (s *rawSubscriber) failIf(err error) {
	if err != nil && s.done != nil && s.lines > 0 {
		s.lines = 0
		s.done <- err
	}
}

// numbered reports whether line is line n of writeLines, without its LF.
func numbered(line []byte, n int) bool {
	if len(line) != lineLen-1 {
		return false
	}
	for i := lineDigit - 1; i >= 0; i-- {
		if line[i] != byte('0'+n%10) {
			return false
		}
		n /= 10
	}
	for _, c := range line[lineDigit:] {
		if c != 'x' {
			return false
		}
	}
	return true
}
