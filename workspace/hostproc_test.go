package workspace_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/workspace"
)

// Benchmarks measure the host in a process of its own: this test binary
// run again with hostProcEnv set to the workspace options (JSON) serves a
// host on 127.0.0.1 and answers, on its standard input and output, what its
// heap and CPU time are. What the benchmark's clients allocate does not
// count then, and the host's heap is read by runtime/metrics in the host's
// own process.
const hostProcEnv = "AHP_WORKSPACE_BENCH_HOST"

// hostFigures is what the host process reports.
type hostFigures struct {
	Idle   uint64        // live heap after a collection at mark
	Peak   uint64        // highest heap (objects, live or not yet swept) since mark
	CPU    time.Duration // user and system time of the process since mark
	Allocs uint64        // bytes allocated since mark
}

// serveHostIfAsked serves a host and exits, once its standard input
// closes, when this process was started as a benchmark's host (see
// startHostProcess).
func serveHostIfAsked() {
	cfg := os.Getenv(hostProcEnv)
	if cfg == "" {
		return
	}
	serveHost(cfg)
	os.Exit(0)
}

func serveHost(cfg string) {
	var wo workspace.Options
	if err := json.Unmarshal([]byte(cfg), &wo); err != nil {
		fmt.Fprintln(os.Stderr, "bad host options:", err)
		os.Exit(2)
	}
	h, err := host.New(&host.Options{
		Agents:    []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Workspace: workspace.New(&wo),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go http.Serve(ln, h.WebSocketHandler(nil))

	if path := os.Getenv(hostProcEnv + "_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	var peak atomic.Uint64
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for t := time.NewTicker(time.Millisecond); ; <-t.C {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	fmt.Printf("ws://%s\n", ln.Addr())
	var idle uint64
	var cpu0 time.Duration
	var allocs0 uint64
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "mark":
			runtime.GC()
			idle = heapObjects()
			peak.Store(idle)
			cpu0, allocs0 = cpuTime(), allocated()
			fmt.Println("ok")
		case "figures":
			f := hostFigures{Idle: idle, Peak: max(peak.Load(), heapObjects()), CPU: cpuTime() - cpu0, Allocs: allocated() - allocs0}
			json.NewEncoder(os.Stdout).Encode(f)
		}
	}
	h.Close()
	if path := os.Getenv(hostProcEnv + "_MEMPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// hostProc is a host running in a process of its own.
type hostProc struct {
	URL string
	in  io.WriteCloser
	out *bufio.Reader
}

// startHostProcess starts a host process with the workspace options and
// stops it when the benchmark ends.
func startHostProcess(tb testing.TB, wo *workspace.Options) *hostProc {
	tb.Helper()
	cfg, err := json.Marshal(wo)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostProcEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &hostProc{in: in, out: bufio.NewReader(outPipe)}
	tb.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	p.URL = p.line(tb)
	return p
}

func (p *hostProc) line(tb testing.TB) string {
	tb.Helper()
	s, err := p.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("host process: %v", err)
	}
	return s[:len(s)-1]
}

// mark collects the host's garbage and starts measuring from there.
func (p *hostProc) mark(tb testing.TB) {
	tb.Helper()
	fmt.Fprintln(p.in, "mark")
	if l := p.line(tb); l != "ok" {
		tb.Fatalf("host process: %q", l)
	}
}

// figures reports the host's heap, CPU time and allocations since mark.
func (p *hostProc) figures(tb testing.TB) hostFigures {
	tb.Helper()
	fmt.Fprintln(p.in, "figures")
	var f hostFigures
	if err := json.Unmarshal([]byte(p.line(tb)), &f); err != nil {
		tb.Fatalf("host process: %v", err)
	}
	return f
}

// mb is bytes in MiB, for b.ReportMetric.
func mb(n uint64) float64 { return float64(n) / (1 << 20) }
