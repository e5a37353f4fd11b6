// Command ahp is a command-line client of the Agent Host Protocol.
//
// Usage:
//
//	ahp [--url URL] [--token TOKEN] [--json] COMMAND [ARGS]
//	ahp --version
//
//	ahp sessions                      list sessions, most recent first
//	ahp new [--provider P] [--cwd D]  create a session and print its ID
//	ahp send SESSION "prompt"         send a prompt and stream the reply
//	ahp chat SESSION                  talk with a session interactively
//	ahp watch URI                     print what arrives on a channel
//	ahp show SESSION                  print a session's transcript
//	ahp rename SESSION TITLE          set a session's title
//	ahp archive [--undo] SESSION      archive a session, or bring it back
//	ahp rm SESSION                    remove a session
//	ahp mcp [on|off] SESSION [NAME]   a session's MCP servers; turn one on/off
//	ahp agents                        list agents, models, modes, sign-in
//	ahp automations [list|show|create|enable|disable|run|runs|rm]
//	                                  automations and their runs
//	ahp completion bash|zsh|fish      print a shell completion script
//
// SESSION is a session URI (<provider>:/<id>, or ahp-session:/<id> for older
// ones; its scheme is the host's business), its ID (what
// follows the scheme), or a prefix of the ID that only one session has. The
// host is at --url (default $AHP_URL, then the URL an ahpd of the same user
// on this machine wrote in its data directory, then ws://127.0.0.1:7247/);
// --token (default $AHP_TOKEN, then the token that ahpd keeps, for loopback
// URLs only) is sent as a
// bearer token. With --json every command prints one JSON object per line.
// Flags take one dash or two; help writes two. Errors are red on a terminal
// (not with NO_COLOR or TERM=dumb).
//
// Exit codes: 0 success; 1 any other failure; 2 bad usage; 3 the host
// cannot be reached or the connection was lost for good; 4 the session or
// channel does not exist (any more); 5 the turn failed, was cancelled, or
// needed an answer that could not be given; 6 the token was refused; 7 the
// host rejected the action (a turn already running, say); 130 interrupted.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/internal/datadir"
	"github.com/ahp-go/ahp/protocol"
)

// version is the ahp release, set at build time with -ldflags.
var version = "devel"

// Exit codes; the package documentation and docs/cli.md list them.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitConnection  = 3
	exitNotFound    = 4
	exitTurnFailed  = 5
	exitAuth        = 6
	exitRejected    = 7
	exitInterrupted = 130
)

const defaultURL = "ws://127.0.0.1:7247/"

// env is what a run of the command sees of the outside world; tests
// replace it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// Whether stdin, stdout and stderr are terminals.
	stdinTTY, stdoutTTY, stderrTTY bool
	// color allows escape sequences for dimmed text on stdout; errColor
	// for coloured errors on stderr.
	color, errColor bool
	// newID makes session and turn IDs.
	newID func() string
	// now is the clock of the status line and of turn start times.
	now func() time.Time
	// loc is the time zone times are shown in.
	loc *time.Location
	// tick is how often the status line is redrawn.
	tick time.Duration
	// interrupts delivers Ctrl-C; nil means none.
	interrupts <-chan os.Signal
	// cbreak makes the stdin terminal hand over each key without echo
	// (chat edits lines itself, to sync the draft) and returns how to
	// restore it; nil leaves stdin read by lines.
	cbreak func() (restore func(), err error)
	// draftDelay is the pause in typing after which chat syncs the draft.
	draftDelay time.Duration
	// width returns the terminal's width in columns (0: unknown).
	width func() int
}

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	e := &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv:    os.Getenv,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		newID:     client.NewID,
		now:       time.Now,
		loc:       time.Local,
		tick:      100 * time.Millisecond,

		interrupts: sig,
		cbreak:     func() (func(), error) { return setCbreak(os.Stdin) },
		draftDelay: draftDelay,
		width:      func() int { return termWidth(os.Stderr) },
	}
	colorOK := os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	e.color = e.stdoutTTY && colorOK
	e.errColor = e.stderrTTY && colorOK
	os.Exit(run(context.Background(), os.Args[1:], e))
}

// globals are the flags every command takes.
type globals struct {
	url   string
	token string
	json  bool
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.url, "url", g.url, "host WebSocket URL (default $AHP_URL, then the local ahpd's, then "+defaultURL+")")
	fs.StringVar(&g.token, "token", g.token, "bearer token (default $AHP_TOKEN, then the local ahpd's)")
	fs.BoolVar(&g.json, "json", g.json, "print one JSON object per line")
}

// command is one subcommand.
type command struct {
	name, args, help string
	flags            func(fs *flag.FlagSet) any
	run              func(ctx context.Context, a *app, pos []string, flags any) error
	nargs            func(n int) bool
}

var commands []*command

func init() {
	commands = []*command{
		{name: "sessions", help: "list sessions, most recent first", nargs: exactly(0), run: runSessions},
		{name: "new", args: "[--provider P] [--cwd DIR]", help: "create a session and print its ID", nargs: exactly(0), flags: newFlags, run: runNew},
		{name: "send", args: "[--yes] [--model M] [--agent A] SESSION PROMPT", help: "send a prompt and stream the reply (PROMPT - reads stdin)", nargs: between(1, 2), flags: sendFlags, run: runSend},
		{name: "chat", args: "[--yes] [--model M] [--agent A] SESSION", help: "talk with a session interactively", nargs: exactly(1), flags: sendFlags, run: runChat},
		{name: "watch", args: "[--snapshot] URI", help: "print the envelopes and notifications of a channel", nargs: exactly(1), flags: watchFlags, run: runWatch},
		{name: "show", args: "SESSION", help: "print a session's transcript", nargs: exactly(1), run: runShow},
		{name: "rename", args: "SESSION TITLE", help: "set a session's title", nargs: exactly(2), run: runRename},
		{name: "archive", args: "[--undo] SESSION", help: "archive a session (--undo brings it back)", nargs: exactly(1), flags: archiveFlags, run: runArchive},
		{name: "rm", args: "SESSION", help: "remove a session", nargs: exactly(1), run: runRemove},
		{name: "mcp", args: "SESSION | on SESSION NAME | off SESSION NAME", help: "list a session's MCP servers and their state, or turn one on or off", nargs: between(1, 3), run: runMCP},
		{name: "agents", help: "list the host's agents: state, sign-in methods, models, modes", nargs: exactly(0), run: runAgents},
		{name: "automations", args: "[list | show A | create [--cron C --tz Z --provider P --cwd D --disabled] TITLE PROMPT | enable A | disable A | run [--wait] A | runs A | rm A]", help: "list, create, switch and run automations", nargs: between(0, 3), flags: automationFlags, run: runAutomations},
		{name: "login", args: "[--key-stdin | --method M] AGENT", help: "sign an agent in: a key (typed without echo, or --key-stdin) or its login in a terminal", nargs: exactly(1), flags: loginFlags, run: runLogin},
		{name: "completion", args: "bash|zsh|fish", help: "print a shell completion script", nargs: exactly(1), run: runCompletion},
	}
}

func exactly(n int) func(int) bool    { return func(k int) bool { return k == n } }
func between(a, b int) func(int) bool { return func(k int) bool { return k >= a && k <= b } }

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// run runs one command line and returns the exit code.
func run(ctx context.Context, args []string, e *env) int {
	// The flags' defaults are empty so that help shows each default once
	// (in the flag's text); the environment and defaultURL fill them in
	// after parsing.
	g := &globals{}
	top := flag.NewFlagSet("ahp", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	g.register(top)
	showVersion := top.Bool("version", false, "print the version of ahp and of the protocol, and exit")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(e.stdout)
			return exitOK
		}
		e.errorf("ahp", "%v", err)
		usage(e.stderr)
		return exitUsage
	}
	if *showVersion {
		printVersion(e.stdout)
		return exitOK
	}
	if top.NArg() == 0 {
		usage(e.stderr)
		return exitUsage
	}
	name, rest := top.Arg(0), top.Args()[1:]
	if name == "help" {
		usage(e.stdout)
		return exitOK
	}
	if name == "version" {
		printVersion(e.stdout)
		return exitOK
	}
	var cmd *command
	for _, c := range commands {
		if c.name == name {
			cmd = c
		}
	}
	if cmd == nil {
		e.errorf("ahp", "unknown command %q", name)
		usage(e.stderr)
		return exitUsage
	}
	fs := flag.NewFlagSet("ahp "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	var flags any
	if cmd.flags != nil {
		flags = cmd.flags(fs)
	}
	pos, err := parseInterleaved(fs, rest)
	if err == nil && !cmd.nargs(len(pos)) {
		err = usagef("wrong number of arguments")
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(e.stdout, cmd, fs)
			return exitOK
		}
		e.errorf("ahp "+name, "%v", err)
		commandUsage(e.stderr, cmd, fs)
		return exitUsage
	}
	g.fill(e.getenv)
	a := &app{env: e, g: g}
	err = cmd.run(ctx, a, pos, flags)
	a.close()
	if err != nil {
		code := exitCode(err)
		if code != exitInterrupted {
			e.errorf("ahp "+name, "%s", errorMessage(err))
		}
		return code
	}
	return exitOK
}

// printVersion prints the version of ahp and of the protocol it speaks.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "ahp %s (AHP %s)\n", version, protocol.ProtocolVersion)
}

// errorf prints an error on stderr after the command's name: in red on a
// terminal that takes colour.
func (e *env) errorf(who, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if e.errColor {
		fmt.Fprintf(e.stderr, "\x1b[1;31m%s:\x1b[0m %s\n", who, msg)
		return
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", who, msg)
}

// fill gives the flags not set on the command line their value from the
// environment, then their default.
func (g *globals) fill(getenv func(string) string) {
	if g.url == "" {
		g.url = getenv("AHP_URL")
	}
	if g.token == "" {
		g.token = getenv("AHP_TOKEN")
	}
	g.local(getenv)
	if g.url == "" {
		g.url = defaultURL
	}
}

// local fills in what is still missing from what an ahpd of this user on
// this machine keeps in its default data directory: the URL and token of
// the running one (its runtime file), else the token it made. The token is
// only ever sent to a loopback URL.
func (g *globals) local(getenv func(string) string) {
	dir, err := datadir.Default(getenv)
	if err != nil {
		return
	}
	rt, err := datadir.ReadRuntime(dir)
	haveRT := err == nil && datadir.IsLoopbackURL(rt.URL) && rt.Live()
	if g.url == "" && haveRT {
		g.url = rt.URL
	}
	url := cmp.Or(g.url, defaultURL)
	if g.token != "" || !datadir.IsLoopbackURL(url) {
		return
	}
	if haveRT && datadir.SameEndpoint(rt.URL, url) {
		g.token = rt.Token
		return
	}
	if tok, err := datadir.ReadToken(dir); err == nil {
		g.token = tok
	}
}

// errorMessage says what went wrong for a user: the client library's
// errors without its "ahp: " prefix and the JSON-RPC code, and a hint
// where one helps.
func errorMessage(err error) string {
	var (
		de *client.DialError
		ce *client.Error
		re *client.RejectedError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &de):
		return strings.Replace(msg, de.Error(), dialMessage(de), 1)
	case errors.As(err, &ce):
		msg = strings.Replace(msg, ce.Error(), ce.Text(), 1)
	case errors.As(err, &re):
		msg = strings.Replace(msg, re.Error(), strings.TrimPrefix(re.Error(), "ahp: "), 1)
	}
	return strings.TrimPrefix(msg, "ahp: ")
}

// dialMessage explains a failed connection.
func dialMessage(de *client.DialError) string {
	switch {
	case de.StatusCode == http.StatusUnauthorized || de.StatusCode == http.StatusForbidden:
		return fmt.Sprintf("the host at %s refused the connection (%d %s): give the right token with --token or AHP_TOKEN", de.URL, de.StatusCode, http.StatusText(de.StatusCode))
	case de.StatusCode != 0:
		return fmt.Sprintf("the host at %s answered %d %s: is it an AHP host?", de.URL, de.StatusCode, http.StatusText(de.StatusCode))
	case errors.Is(de, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing is listening at %s: is ahpd running? Start it with 'ahpd', or point --url (or AHP_URL) at the host", de.URL)
	}
	cause := de.Err
	for u := errors.Unwrap(cause); u != nil; u = errors.Unwrap(u) {
		cause = u
	}
	return fmt.Sprintf("cannot connect to %s: %v", de.URL, cause)
}

// parseInterleaved parses flags wherever they appear among the positional
// arguments; "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: ahp [--url URL] [--token TOKEN] [--json] COMMAND [ARGS]\n       ahp --version\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.help)
	}
	fmt.Fprintf(w, "\nSESSION is a session URI, its ID or a unique prefix of the ID.\nRun 'ahp COMMAND --help' for a command's flags.\n")
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: ahp %s %s\n\n%s\n\nFlags:\n", c.name, c.args, c.help)
	printFlags(w, fs)
}

// printFlags lists a command's flags the way the documentation writes
// them, with two dashes (the flag package takes one or two alike).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		switch name {
		case "":
		case "string":
			line += " " + strings.ToUpper(f.Name)
		default:
			line += " " + strings.ToUpper(name)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, help)
	})
}

// turnError reports a turn that did not complete normally.
type turnError struct{ msg string }

func (e *turnError) Error() string { return e.msg }

// errInterrupted ends a command stopped with Ctrl-C.
var errInterrupted = errors.New("interrupted")

// exitCode maps an error to the exit code scripts can rely on.
func exitCode(err error) int {
	var (
		ue *usageError
		te *turnError
		re *client.RejectedError
		de *client.DialError
	)
	switch {
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &te):
		return exitTurnFailed
	case errors.As(err, &re):
		return exitRejected
	case errors.As(err, &de) && (de.StatusCode == 401 || de.StatusCode == 403),
		errors.Is(err, client.ErrAuthRequired), errors.Is(err, client.ErrPermissionDenied):
		return exitAuth
	case errors.Is(err, client.ErrSessionNotFound), errors.Is(err, client.ErrNotFound),
		errors.Is(err, client.ErrChannelGone), errors.Is(err, client.ErrProviderNotFound), errors.Is(err, errNoSession),
		errors.Is(err, errNoAutomation):
		return exitNotFound
	case errors.As(err, &de), errors.Is(err, client.ErrDisconnected), errors.Is(err, client.ErrClosed):
		return exitConnection
	}
	return exitError
}

var errNoSession = errors.New("no such session")

// app holds what the commands share: the environment, the global flags and
// the connection.
type app struct {
	*env
	g *globals
	c *client.Client

	mu  sync.Mutex
	scr *screen // the transcript, while a conversation shows one

	mdState
}

// connect dials the host and initializes.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	c, err := client.Connect(ctx, a.g.url, &client.Options{
		ClientID:             a.newID(),
		Token:                a.g.token,
		ClientInfo:           &protocol.Implementation{Name: "ahp", Version: protocol.Ptr(version)},
		MaxReconnectAttempts: 30,
		MaxReconnectDelay:    2 * time.Second,
		Now:                  a.now,
		OnConnection:         a.connectionEvent,
	})
	if err != nil {
		return nil, err
	}
	a.c = c
	return c, nil
}

func (a *app) close() {
	if a.c != nil {
		a.c.Close()
	}
}

// connectionEvent tells the user about connection losses.
func (a *app) connectionEvent(ev client.ConnectionEvent) {
	var msg string
	switch ev.State {
	case client.Disconnected:
		msg = fmt.Sprintf("ahp: connection lost (%v); reconnecting", ev.Err)
	case client.Reconnected:
		how := "from fresh snapshots"
		if ev.Resume.Replayed {
			how = fmt.Sprintf("replayed %d actions", ev.Resume.Actions)
		}
		msg = fmt.Sprintf("ahp: reconnected (%s)", how)
	default:
		return
	}
	a.mu.Lock()
	scr := a.scr
	a.mu.Unlock()
	if scr != nil {
		scr.note(msg)
		return
	}
	fmt.Fprintln(a.stderr, msg)
}

// resolveSession turns a session argument into a session URI: a URI as it
// is, otherwise an ID or a unique ID prefix among the host's sessions.
//
// A URI and an ID are looked up alike, so that a session that does not
// exist fails the same way whichever is given.
func (a *app) resolveSession(ctx context.Context, arg string) (string, error) {
	// Session URIs are opaque (their scheme depends on the host and the
	// agent): an argument with a scheme is a URI, matched whole or by the
	// ID after its scheme; a URI is never a prefix.
	exact := isURI(arg)
	if exact {
		if sessionID(arg) == "" {
			return "", usagef("%q names no session", arg)
		}
	}
	list, err := a.c.Sessions(ctx)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, s := range list {
		id := sessionID(s.Resource)
		if s.Resource == arg || id == arg || (exact && id == sessionID(arg)) {
			return s.Resource, nil
		}
		if !exact && strings.HasPrefix(id, arg) {
			matches = append(matches, s.Resource)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: %s", errNoSession, sessionID(arg))
	case 1:
		return matches[0], nil
	}
	return "", usagef("%q matches %d sessions; give more of the ID", arg, len(matches))
}

// sessionID returns the ID part of a session URI: what follows its scheme
// and slashes, whatever the scheme.
func sessionID(uri string) string {
	if isURI(uri) {
		uri = uri[strings.IndexByte(uri, ':')+1:]
	}
	return strings.TrimLeft(uri, "/")
}

// isURI reports whether s starts with a URI scheme ("x:", "ahp-session:").
func isURI(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// newSessionURI names a new session on provider <provider>:/<id>, as VS
// Code does, so every client sees its provider; ahp-session:/<id> when
// the provider is not known or cannot be a URI scheme.
func newSessionURI(provider, id string) string {
	if !protocol.ValidScheme(provider) || protocol.ReservedScheme(provider) {
		return protocol.SessionURI(id)
	}
	return provider + ":/" + id
}

// printJSON writes v as one line of JSON, object members sorted.
func (a *app) printJSON(v any) error {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = a.stdout.Write(b)
	return err
}
