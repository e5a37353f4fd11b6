// Command ahpd is the AHP host daemon: it serves Agent Host Protocol
// clients over WebSocket, with the built-in echo agent.
//
// Usage:
//
//	ahpd [flags]
//
// On start it prints one line with the ws:// URL to connect to, carrying
// the token clients must present (made at first start and kept in the
// data directory unless --token, AHPD_TOKEN or --no-token say otherwise;
// see docs/security.md). Flags may also come from a JSON config file
// (--config); flags given on the command line win. Run `ahpd -h` for the
// list.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/automation"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/connlimit"
	"github.com/ahp-go/ahp/internal/metrics"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/web"
)

// defaultMaxConnections is the default of --max-connections: well under
// the usual descriptor limits, which also cover agents and the store.
const defaultMaxConnections = 1024

// version is the ahpd release, set at build time with -ldflags.
var version = "devel"

// config holds every setting; the JSON names are those of the config file.
// Settings of the store and of the agent backends live in their own
// structs (store.go, agents.go), embedded here.
type config struct {
	Listen        string   `json:"listen"`
	ReplaySize    int      `json:"replaySize"`
	ReplayBytes   int      `json:"replayBytes"`
	LogLevel      string   `json:"logLevel"`
	AllowOrigins  []string `json:"allowOrigins"`
	AllowHosts    []string `json:"allowHosts"`
	AnyOrigin     bool     `json:"insecureAnyOrigin"`
	MaxMessage    int64    `json:"maxMessageBytes"`
	QueueBytes    int64    `json:"queueBytes"`
	InitTimeout   string   `json:"initTimeout"`
	PingInterval  string   `json:"pingInterval"`
	PingTimeout   string   `json:"pingTimeout"`
	ShutdownGrace string   `json:"shutdownGrace"`
	MaxConns      int      `json:"maxConnections"`
	IdleTimeout   string   `json:"httpIdleTimeout"`
	NoWeb         bool     `json:"noWeb"`
	tokenConfig
	storeConfig
	agentConfig
	workspaceConfig
	opsConfig

	ShowVersion bool   `json:"-"`
	CheckOnly   bool   `json:"-"`
	ConfigFile  string `json:"-"`
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ahpd:", err)
		os.Exit(1)
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parseConfig builds the configuration: defaults, then the config file when
// --config names one, then the environment, then the command-line flags,
// each overriding the one before.
func parseConfig(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{
		Listen:        "127.0.0.1:7247",
		LogLevel:      "info",
		ReplaySize:    host.DefaultReplayEntries,
		ReplayBytes:   host.DefaultReplayBytes,
		MaxMessage:    host.DefaultMaxMessageBytes,
		QueueBytes:    host.DefaultQueueBytes,
		InitTimeout:   host.DefaultInitTimeout.String(),
		PingInterval:  host.DefaultPingInterval.String(),
		PingTimeout:   host.DefaultPingInterval.String(),
		ShutdownGrace: "5s",
		MaxConns:      defaultMaxConnections,
		IdleTimeout:   "60s",
	}
	cfg.storeConfig.defaults()
	cfg.agentConfig.defaults()
	cfg.workspaceConfig.defaults()
	if file := configFileArg(args); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if tok := os.Getenv("AHPD_TOKEN"); tok != "" {
		cfg.Token = tok
	}
	fs := newFlagSet(cfg, stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, cfg.validate()
}

// newFlagSet declares every flag of ahpd, each bound to its field of cfg
// with the field's current value as default. docs/flags.md is rendered
// from it (TestFlagsDoc).
func newFlagSet(cfg *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ahpd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.ConfigFile, "config", "", "JSON config file; its keys are the flag names in camelCase (see docs/flags.md)")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to listen on; port 0 picks a free port")
	cfg.tokenConfig.register(fs)
	fs.IntVar(&cfg.ReplaySize, "replay-size", cfg.ReplaySize, "actions kept for reconnecting clients")
	fs.IntVar(&cfg.ReplayBytes, "replay-bytes", cfg.ReplayBytes, "bytes of actions kept for reconnecting clients")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error")
	fs.Var((*stringList)(&cfg.AllowOrigins), "allow-origin", "browser origin pattern allowed to connect (repeatable)")
	fs.Var((*stringList)(&cfg.AllowHosts), "allow-host", "host name clients may reach ahpd by besides loopback ones (repeatable; pattern like *.lan)")
	fs.BoolVar(&cfg.AnyOrigin, "insecure-any-origin", cfg.AnyOrigin, "accept browser connections from any origin")
	fs.Int64Var(&cfg.MaxMessage, "max-message-bytes", cfg.MaxMessage, "largest incoming message")
	fs.Int64Var(&cfg.QueueBytes, "queue-bytes", cfg.QueueBytes, "bytes queued to one client before it is dropped as too slow")
	fs.StringVar(&cfg.InitTimeout, "init-timeout", cfg.InitTimeout, "how long a connection may stay without initialize")
	fs.StringVar(&cfg.PingInterval, "ping-interval", cfg.PingInterval, "how often clients are pinged; 0 disables pings")
	fs.StringVar(&cfg.PingTimeout, "ping-timeout", cfg.PingTimeout, "how long a client may take to answer a ping before it is dropped")
	fs.StringVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "how long to wait for clients on shutdown")
	fs.IntVar(&cfg.MaxConns, "max-connections", cfg.MaxConns, "most connections held open at once; more are answered 503 (0: no limit)")
	fs.StringVar(&cfg.IdleTimeout, "http-idle-timeout", cfg.IdleTimeout, "how long an idle keep-alive HTTP connection is kept")
	fs.BoolVar(&cfg.NoWeb, "no-web", cfg.NoWeb, "do not serve the web client at /")
	fs.BoolVar(&cfg.ShowVersion, "version", false, "print the version and exit")
	fs.BoolVar(&cfg.CheckOnly, "check", false, "check the configuration and exit")
	cfg.storeConfig.register(fs)
	cfg.agentConfig.register(fs)
	cfg.workspaceConfig.register(fs)
	cfg.opsConfig.register(fs)
	return fs
}

// configFileArg finds the value of --config before the flags are parsed,
// so that flags can override the file.
func configFileArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"-config", "--config"} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

func (c *config) validate() error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", c.Listen, err)
	}
	if err := c.tokenConfig.validate(isLoopback(host), c.Listen); err != nil {
		return err
	}
	for _, p := range append(c.AllowHosts, c.AllowOrigins...) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if err := c.opsConfig.validate(); err != nil {
		return err
	}
	for _, d := range []struct{ flag, value string }{
		{"init-timeout", c.InitTimeout}, {"ping-interval", c.PingInterval}, {"ping-timeout", c.PingTimeout},
	} {
		if v, err := time.ParseDuration(d.value); err != nil || v < 0 {
			return fmt.Errorf("--%s %q: want a duration of zero or more", d.flag, d.value)
		}
	}
	if _, err := time.ParseDuration(c.ShutdownGrace); err != nil {
		return fmt.Errorf("--shutdown-grace: %w", err)
	}
	if d, err := time.ParseDuration(c.IdleTimeout); err != nil || d <= 0 {
		return fmt.Errorf("--http-idle-timeout %q: want a positive duration", c.IdleTimeout)
	}
	if c.ReplaySize < 0 || c.ReplayBytes < 0 || c.MaxMessage < 0 || c.MaxConns < 0 || c.QueueBytes < 0 {
		return errors.New("sizes must not be negative")
	}
	if err := c.storeConfig.validate(); err != nil {
		return err
	}
	if err := c.workspaceConfig.finish(); err != nil {
		return err
	}
	return c.agentConfig.validate()
}

// loopbackListener reports whether --listen only accepts local
// connections.
func (c *config) loopbackListener() bool {
	h, _, err := net.SplitHostPort(c.Listen)
	return err == nil && isLoopback(h)
}

// isLoopback reports whether a listen host only accepts local connections.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mustDuration parses a duration already checked by validate.
func mustDuration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// pingInterval maps the flag's 0 (no pings) to the host's negative.
func pingInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// run starts the host and serves until ctx ends or a signal arrives.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if cfg.ShowVersion {
		fmt.Fprintf(stdout, "ahpd %s (AHP %s; accepts %s)\n", version, protocol.ProtocolVersion, strings.Join(protocol.SupportedVersions(), ", "))
		return nil
	}
	if cfg.CheckOnly {
		for _, a := range cfg.Agents {
			if err := a.CheckCommand(); err != nil {
				return err
			}
		}
		fmt.Fprintln(stdout, "configuration ok")
		return nil
	}
	level, _ := parseLevel(cfg.LogLevel)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	defer spareProcs(cfg.SpareProcs)()
	// Without a data directory (no home, --store memory) a given token
	// or --no-token still runs; only a kept token needs one, and the
	// keys clients sign agents in with are kept in memory only.
	dataDir, dirErr := cfg.dataDir()
	credPath := ""
	if dirErr == nil {
		credPath = filepath.Join(dataDir, "credentials.json")
	}
	st, err := cfg.storeConfig.open(log)
	if err != nil {
		return err
	}
	defer st.Close()
	creds, err := acp.OpenCredentials(credPath)
	if err != nil {
		return err
	}
	agents, acps, err := cfg.agentConfig.backends(log, creds)
	if err != nil {
		return err
	}
	token, err := cfg.tokenConfig.resolve(dataDir, dirErr, log)
	if err != nil {
		return err
	}
	probesDone := make(chan struct{})
	mets := metrics.New(&metrics.Options{Version: version, Agents: acps, AgentsProbed: probesDone})
	opts := &host.Options{
		OnStoreWrite:      mets.ObserveStoreWrite,
		Store:             st,
		Agents:            agents,
		ServerInfo:        protocol.Implementation{Name: "ahpd", Version: protocol.Ptr(version)},
		ReplayEntries:     cfg.ReplaySize,
		ReplayBytes:       cfg.ReplayBytes,
		MaxMessageBytes:   cfg.MaxMessage,
		QueueBytes:        cfg.QueueBytes,
		InitializeTimeout: mustDuration(cfg.InitTimeout),
		SaveWindow:        cfg.storeConfig.saveWindow(),
		StoreReadShare:    cfg.StoreReadShare,
		Logger:            log,
		Automations:       automation.Plug(&automation.Options{Store: st, Logger: log}),
	}
	cfg.workspaceConfig.apply(opts, log)
	h, err := host.New(opts)
	if err != nil {
		return err
	}
	mets.Watch(h)
	stopDebug, _, err := cfg.opsConfig.debugServer(log)
	if err != nil {
		h.Close()
		return err
	}
	defer stopDebug()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		h.Close()
		return err
	}
	idle, _ := time.ParseDuration(cfg.IdleTimeout)
	lim := connlimit.New(cfg.MaxConns, log)
	wsOpts := &host.WebSocketOptions{
		Token:        token,
		AllowedHosts: cfg.AllowHosts,
		// A listener reachable beyond this machine requires a
		// token; it answers to any name unless names are given.
		AnyHost:                 !cfg.loopbackListener() && len(cfg.AllowHosts) == 0,
		OriginPatterns:          cfg.AllowOrigins,
		InsecureSkipOriginCheck: cfg.AnyOrigin,
		PingInterval:            pingInterval(mustDuration(cfg.PingInterval)),
		PingTimeout:             mustDuration(cfg.PingTimeout),
	}
	var handler http.Handler = h.WebSocketHandler(wsOpts)
	if !cfg.NoWeb {
		handler = web.New(handler)
	}
	handler = cfg.opsConfig.opsRoutes(mets, wsOpts, handler)
	srv := &http.Server{
		Handler:           lim.Handler(handler),
		ConnContext:       lim.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Local clients find ahpd by the runtime file once its URL is out.
	if dirErr == nil {
		defer publishRuntime(dataDir, ln.Addr(), token, log)()
	}
	fmt.Fprintf(stdout, "ahpd listening on %s\n", wsURL(ln.Addr(), token))
	if !cfg.NoWeb {
		fmt.Fprintf(stdout, "web client at %s\n", webURL(ln.Addr(), token))
	}
	log.Info("ahpd started", "version", version, "protocol", protocol.ProtocolVersion, "addr", ln.Addr().String(), "token", token != "")

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lim.Listener(ln)) }()

	// Agents are probed once ahpd listens; each is published as its probe
	// ends. The probes stop before the host does.
	probeCtx, cancelProbes := context.WithCancel(context.Background())
	go func() {
		defer close(probesDone)
		probeAgents(probeCtx, acps, log, h.RefreshAgents)
	}()
	stopProbes := func() {
		cancelProbes()
		<-probesDone
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		stopProbes()
		h.Close()
		return err
	}
	stopProbes()
	grace, _ := time.ParseDuration(cfg.ShutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	srv.Shutdown(shutdownCtx)
	// The same grace bounds the WebSocket connections, which the HTTP
	// server no longer tracks once upgraded, and the host's own shutdown.
	return h.Shutdown(shutdownCtx)
}

// webURL is the link that opens the web client. The token, if any, goes
// in the fragment: the browser keeps it to itself (it is never part of a
// page request, so never in a log or a Referer), and the page hands it to
// the WebSocket.
func webURL(addr net.Addr, token string) string {
	u := "http://" + addr.String() + "/"
	if token != "" {
		u += "#token=" + url.QueryEscape(token)
	}
	return u
}
