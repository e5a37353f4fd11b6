package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

// runSessions lists the sessions, most recently modified first.
func runSessions(ctx context.Context, a *app, _ []string, _ any) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	list, err := c.Sessions(ctx)
	if err != nil {
		return err
	}
	slices.SortStableFunc(list, func(x, y protocol.SessionSummary) int {
		return cmp.Compare(y.ModifiedAt, x.ModifiedAt)
	})
	if a.g.json {
		for _, s := range list {
			if err := a.printJSON(s); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stderr, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tMODIFIED\tPROVIDER\tTITLE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sessionID(s.Resource), sessionStatusText(s.Status), a.timeText(s.ModifiedAt), s.Provider, s.Title)
	}
	return tw.Flush()
}

// sessionStatusText names a session status.
func sessionStatusText(s protocol.SessionStatus) string {
	var out string
	switch {
	case s&protocol.SessionStatusInputNeeded == protocol.SessionStatusInputNeeded:
		out = "input-needed"
	case s&protocol.SessionStatusInProgress != 0:
		out = "running"
	case s&protocol.SessionStatusError != 0:
		out = "error"
	default:
		out = "idle"
	}
	if s&protocol.SessionStatusIsArchived != 0 {
		out += ",archived"
	}
	return out
}

func (a *app) timeText(wire string) string {
	t, err := protocol.ParseTime(wire)
	if err != nil {
		return wire
	}
	return t.In(a.loc).Format(time.DateTime)
}

type newOptions struct{ provider, cwd string }

func newFlags(fs *flag.FlagSet) any {
	o := &newOptions{}
	fs.StringVar(&o.provider, "provider", "", "agent provider (default: the host's first)")
	fs.StringVar(&o.cwd, "cwd", "", "working directory of the session")
	return o
}

// runNew creates a session, waits for it to be ready and prints its ID.
func runNew(ctx context.Context, a *app, _ []string, flags any) error {
	o := flags.(*newOptions)
	var dirURI string
	if o.cwd != "" {
		dir, err := filepath.Abs(o.cwd)
		if err != nil {
			return err
		}
		// The directory is the host's; a host on this machine sees ours.
		if a.localHost() {
			if st, err := os.Stat(dir); err != nil {
				return usagef("--cwd %s: %v", o.cwd, errors.Unwrap(err))
			} else if !st.IsDir() {
				return usagef("--cwd %s: not a directory", o.cwd)
			}
		}
		dirURI = (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	provider := o.provider
	if provider == "" {
		// The host's default agent is the first it lists.
		if root, err := a.rootState(ctx); err == nil && len(root.Agents) > 0 {
			provider = root.Agents[0].Provider
		}
	}
	uri := newSessionURI(provider, a.newID())
	p := &protocol.CreateSessionParams{Channel: uri}
	if provider != "" {
		p.Provider = &provider
	}
	if dirURI != "" {
		p.WorkingDirectories = []string{dirURI}
	}
	if err := c.CreateSession(ctx, p); err != nil {
		if errors.Is(err, client.ErrProviderNotFound) {
			if known := a.providers(ctx); known != "" {
				return fmt.Errorf("%w; the host offers %s", err, known)
			}
		}
		if errors.Is(err, client.ErrAuthRequired) && provider != "" {
			return fmt.Errorf("%w; sign in with: ahp login %s", err, provider)
		}
		return err
	}
	sub, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return err
	}
	st, err := waitReady(ctx, sub)
	if err != nil {
		return err
	}
	if a.g.json {
		out := struct {
			Session  string `json:"session"`
			ID       string `json:"id"`
			Chat     string `json:"chat,omitempty"`
			Provider string `json:"provider"`
		}{uri, sessionID(uri), defaultChat(st), st.Provider}
		return a.printJSON(out)
	}
	fmt.Fprintln(a.stdout, sessionID(uri))
	return nil
}

// localHost reports whether the host's URL names this machine.
func (a *app) localHost() bool {
	u, err := url.Parse(a.g.url)
	if err != nil {
		return false
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}

// providers lists the agent providers the root state offers, for a
// message ("" when they cannot be read).
func (a *app) providers(ctx context.Context) string {
	root, err := a.rootState(ctx)
	if err != nil || len(root.Agents) == 0 {
		return ""
	}
	names := make([]string, len(root.Agents))
	for i, ag := range root.Agents {
		names[i] = ag.Provider
		if ag.DisplayName != "" && ag.DisplayName != ag.Provider {
			names[i] += " (" + ag.DisplayName + ")"
		}
	}
	return strings.Join(names, ", ")
}

// rootState reads the root state once.
func (a *app) rootState(ctx context.Context) (*protocol.RootState, error) {
	sub, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: protocol.RootURI})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	st := sub.Root()
	if st == nil {
		return nil, errors.New("the host sent no root state")
	}
	return st, nil
}

// waitReady waits for a session to leave lifecycle "creating".
func waitReady(ctx context.Context, sub *client.Subscription) (*protocol.SessionState, error) {
	for {
		st := sub.Session()
		switch st.Lifecycle {
		case protocol.SessionLifecycleReady:
			return st, nil
		case protocol.SessionLifecycleFailed, protocol.SessionLifecycleCreationFailed:
			msg := "unknown error"
			if st.CreationError != nil {
				msg = st.CreationError.Message
			}
			return nil, fmt.Errorf("the session could not start: %s", msg)
		}
		if _, err := sub.Next(ctx); err != nil && err != client.ErrLagged {
			return nil, err
		}
	}
}

// defaultChat returns the chat to talk to in a session.
func defaultChat(st *protocol.SessionState) string {
	if st.DefaultChat != nil {
		return *st.DefaultChat
	}
	if len(st.Chats) > 0 {
		return st.Chats[0].Resource
	}
	return ""
}

// runRemove disposes of a session.
func runRemove(ctx context.Context, a *app, pos []string, _ any) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	uri, err := a.resolveSession(ctx, pos[0])
	if err != nil {
		return err
	}
	if err := c.DisposeSession(ctx, &protocol.DisposeSessionParams{Channel: uri}); err != nil {
		return err
	}
	if a.g.json {
		return a.printJSON(map[string]string{"removed": uri})
	}
	fmt.Fprintf(a.stderr, "removed %s\n", sessionID(uri))
	return nil
}

type watchOptions struct{ snapshot bool }

func watchFlags(fs *flag.FlagSet) any {
	o := &watchOptions{}
	fs.BoolVar(&o.snapshot, "snapshot", false, "print the channel's snapshot first")
	return o
}

// runWatch prints what arrives on a channel until interrupted.
func runWatch(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*watchOptions)
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	uri := pos[0]
	switch {
	case uri == "root":
		uri = protocol.RootURI
	case !strings.Contains(uri, ":"):
		if uri, err = a.resolveSession(ctx, uri); err != nil {
			return err
		}
	}
	sub, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		return err
	}
	snap := sub.Snapshot()
	if o.snapshot {
		if a.g.json {
			a.printJSON(map[string]any{"snapshot": snap})
		} else {
			b, _ := protocol.Marshal(snap.State)
			fmt.Fprintf(a.stdout, "snapshot seq=%d %s\n", snap.FromSeq, b)
		}
	}
	if !a.g.json {
		fmt.Fprintf(a.stderr, "watching %s from seq %d; Ctrl-C to stop\n", uri, snap.FromSeq)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		ev, err := sub.Next(ctx)
		switch {
		case err == client.ErrLagged:
			fmt.Fprintln(a.stderr, "ahp: output too slow; some events were skipped")
			continue
		case err != nil && ctx.Err() != nil:
			return nil // interrupted: the normal way out
		case err != nil:
			return err
		}
		a.printEvent(ev)
	}
}

// printEvent prints one event of a watched channel.
func (a *app) printEvent(ev client.Event) {
	switch {
	case ev.Envelope != nil && a.g.json:
		a.printJSON(ev.Envelope)
	case ev.Envelope != nil:
		e := ev.Envelope
		var b strings.Builder
		fmt.Fprintf(&b, "seq=%d %s", e.ServerSeq, e.Action.Type())
		if e.Origin != nil {
			fmt.Fprintf(&b, " from=%s#%d", e.Origin.ClientID, e.Origin.ClientSeq)
		}
		if ev.Replayed {
			b.WriteString(" replayed")
		}
		if e.RejectionReason != nil {
			fmt.Fprintf(&b, " rejected=%q", *e.RejectionReason)
		}
		body, _ := protocol.Marshal(e.Action)
		fmt.Fprintf(a.stdout, "%s %s\n", b.String(), body)
	case ev.Notification != nil && a.g.json:
		a.printJSON(map[string]any{"method": ev.Notification.Method, "params": ev.Notification.Params})
	case ev.Notification != nil:
		body, _ := protocol.Marshal(ev.Notification.Params)
		fmt.Fprintf(a.stdout, "%s %s\n", ev.Notification.Method, body)
	case ev.Resync != nil && a.g.json:
		a.printJSON(map[string]any{"resync": ev.Resync})
	case ev.Resync != nil:
		fmt.Fprintf(a.stdout, "resync seq=%d (the host sent a fresh snapshot after a reconnection)\n", ev.Resync.FromSeq)
	}
}
