package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
)

// Environment of the client process BenchmarkIdleConnections starts: the
// test binary itself, which then only holds connections.
const (
	clientsURLEnv = "AHP_BENCH_CLIENTS_URL"
	clientsNEnv   = "AHP_BENCH_CLIENTS_N"
	connsEnv      = "AHP_BENCH_CONNS" // overrides the number of connections
)

func TestMain(m *testing.M) {
	if url := os.Getenv(clientsURLEnv); url != "" {
		n, _ := strconv.Atoi(os.Getenv(clientsNEnv))
		if err := holdClients(url, n); err != nil {
			fmt.Fprintln(os.Stderr, "clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdClients opens n connections to url, initializes each with a root
// subscription, says "ready", then counts the root/sessionAdded
// notifications they receive, saying "round K" each time every connection
// has received K of them. It returns when stdin closes.
func holdClients(url string, n int) error {
	ctx := context.Background()
	conns := make([]*websocket.Conn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				ws, _, err := websocket.Dial(dctx, url, nil)
				if err == nil {
					init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["0.8.0"],"clientId":"idle-%d","initialSubscriptions":["%s"]}}`, i, protocol.RootURI)
					if err = ws.Write(dctx, websocket.MessageText, []byte(init)); err == nil {
						_, _, err = ws.Read(dctx)
					}
				}
				cancel()
				if err != nil {
					select {
					case errs <- fmt.Errorf("connection %d: %w", i, err):
					default:
					}
					return
				}
				conns[i] = ws
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	var total atomic.Int64
	var out sync.Mutex
	for _, ws := range conns {
		ws.SetReadLimit(1 << 20)
		go func() {
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if strings.Contains(string(data), `"root/sessionAdded"`) {
					if t := total.Add(1); t%int64(n) == 0 {
						out.Lock()
						fmt.Printf("round %d\n", t/int64(n))
						out.Unlock()
					}
				}
			}
		}()
	}
	out.Lock()
	fmt.Println("ready")
	out.Unlock()
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent goes away
	return nil
}

// memNow returns the live heap after a collection and the resident set.
func memNow(b *testing.B) (heap, rss uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: resident memory cannot be measured here")
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return m.HeapAlloc, rss
}

// BenchmarkIdleConnections holds 10,000 idle connections (AHP_BENCH_CONNS
// to change it), each initialized and subscribed to the root channel, from
// a separate process, and reports what they cost the host: live heap and
// resident memory per connection, and goroutines per connection. Each
// iteration is one broadcast (a session created, announced on the root
// channel) that every connection must receive. It stops by itself: every
// wait is bounded.
func BenchmarkIdleConnections(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv(connsEnv)); err == nil && v > 0 {
		n = v
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1})}})
	if err != nil {
		b.Fatal(err)
	}
	url, stop := serveOnce(h)
	defer stop()
	admin := hosttest.Dial(b, url, "admin")
	admin.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "admin"}, nil)

	heap0, rss0 := memNow(b)
	goroutines0 := runtime.NumGoroutine()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), clientsURLEnv+"="+url, clientsNEnv+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string, within time.Duration) {
		b.Helper()
		select {
		case line, ok := <-lines:
			if !ok || line != want {
				b.Fatalf("client process said %q (open %v), want %q", line, ok, want)
			}
		case <-time.After(within):
			b.Fatalf("client process did not say %q within %v", want, within)
		}
	}
	expect("ready", 5*time.Minute)

	heap1, rss1 := memNow(b)
	goroutines1 := runtime.NumGoroutine()

	round := 0
	for b.Loop() {
		round++
		admin.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI(fmt.Sprintf("broadcast-%d", round))}, nil)
		expect(fmt.Sprintf("round %d", round), time.Minute)
	}
	// Reported after the loop, which resets what was reported before it.
	b.ReportMetric(float64(n), "conns-reached")
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(n), "heap-B/conn")
	b.ReportMetric(float64(int64(rss1)-int64(rss0))/float64(n), "rss-B/conn")
	b.ReportMetric(float64(goroutines1-goroutines0)/float64(n), "goroutines/conn")
	b.ReportMetric(float64(heap1)/(1<<20), "heap-MiB")
}
