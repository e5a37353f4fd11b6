// Package workspace lets clients work in a session's folders through a
// host: the resource* commands on files, and (in its sub-packages)
// terminals, watches and changesets. It plugs into a host with
// host.Options.Workspace:
//
//	h, err := host.New(&host.Options{
//		Agents:    []agent.Backend{echo.New()},
//		Workspace: workspace.New(&workspace.Options{Roots: []string{"/srv/shared"}}),
//	})
//
// The workspace reaches the host through the host.WorkspaceHost it is
// made with, and its client methods (Workspace.Methods) join the host's
// one method table, which decodes and checks their params and gates them
// by protocol version before they run, as for the host's own methods.
//
// What a client may reach is its scope: the working directories of every
// session on the host, the configured Roots, and whatever it was granted
// with resourceRequest under the Requestable directories. With Roots,
// working directories are confined to them: the Workspace is a
// host.DirectoryConfiner, and the scope is the roots and the grants.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/changeset"
	"github.com/ahp-go/ahp/workspace/files"
)

// Options configures a workspace. The zero value serves the sessions'
// working directories and nothing else.
type Options struct {
	// Roots are directories clients may read and write. When there are
	// any, sessions, chats and terminals may only have working
	// directories inside them (see host.DirectoryConfiner). Relative
	// paths are made absolute.
	Roots []string
	// Requestable are directories a client reaches only after asking with
	// resourceRequest; the grant lasts as long as its connection.
	Requestable []string
	// MaxReadBytes bounds one read (files.Options.MaxReadBytes).
	MaxReadBytes int64
	// MaxListEntries bounds one listing (files.Options.MaxListEntries).
	MaxListEntries int
	// Shell is the command terminals run; empty means the user's shell
	// ($SHELL), with shell integration when it is bash.
	Shell []string
	// Scrollback is how many bytes of output each terminal keeps for
	// clients that subscribe later. Zero means DefaultScrollback.
	Scrollback int
	// MaxChangesetFiles bounds the files one changeset lists
	// (changeset.Options.MaxFiles).
	MaxChangesetFiles int
	// Git is the git executable changesets use; empty means "git" on
	// $PATH. Without one no changesets are offered.
	Git string
	// Logger receives the workspace's logs. Nil discards them.
	Logger *slog.Logger
}

// Workspace is the host.Workspace this package provides. Its methods are
// safe for concurrent use.
type Workspace struct {
	h     host.WorkspaceHost
	opts  Options
	log   *slog.Logger
	files *files.Service
	roots []string
	// realRoots are the roots with their symbolic links resolved, which
	// working directories are confined to (confine.go).
	realRoots []string

	changesets *changeset.Manager

	mu        sync.Mutex
	closed    bool
	grants    map[host.Client][]files.Root
	terms     map[string]*term
	watches   map[string]*watchChan
	toRelease []*watchChan // watches whose last subscriber left
	termOrder []string     // terminal URIs in creation order

	rootMu     sync.Mutex    // serialises root/terminalsChanged
	dirty      chan struct{} // asks rootLoop to publish the terminal list
	releaseSig chan struct{} // asks rootLoop to release watches in toRelease
	stop       chan struct{} // closed by Close
	wg         sync.WaitGroup
}

// New returns the constructor to put in host.Options.Workspace.
func New(opts *Options) func(host.WorkspaceHost) (host.Workspace, error) {
	return func(h host.WorkspaceHost) (host.Workspace, error) {
		var o Options
		if opts != nil {
			o = *opts
		}
		if o.Logger == nil {
			o.Logger = slog.New(slog.DiscardHandler)
		}
		if o.Scrollback <= 0 {
			o.Scrollback = DefaultScrollback
		}
		roots, err := absAll(o.Roots)
		if err != nil {
			return nil, err
		}
		req, err := absAll(o.Requestable)
		if err != nil {
			return nil, err
		}
		w := &Workspace{
			h:          h,
			opts:       o,
			log:        o.Logger,
			files:      files.New(&files.Options{MaxReadBytes: o.MaxReadBytes, MaxListEntries: o.MaxListEntries, Requestable: req}),
			roots:      roots,
			realRoots:  realRootsOf(roots),
			grants:     map[host.Client][]files.Root{},
			terms:      map[string]*term{},
			watches:    map[string]*watchChan{},
			dirty:      make(chan struct{}, 1),
			releaseSig: make(chan struct{}, 1),
			stop:       make(chan struct{}),
		}
		w.changesets = changeset.New(h, &changeset.Options{Git: o.Git, MaxContentBytes: o.MaxReadBytes, MaxFiles: o.MaxChangesetFiles, Logger: o.Logger})
		w.wg.Go(w.rootLoop)
		return w, nil
	}
}

func absAll(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Methods implements host.Workspace: the client methods the workspace
// serves, for the host's method table.
func (w *Workspace) Methods() []host.Method {
	return []host.Method{
		host.Handle("resourceRead", bind(w, resourceRead)),
		host.Handle("resourceWrite", bind(w, resourceWrite)),
		host.Handle("resourceList", bind(w, resourceList)),
		host.Handle("resourceCopy", bind(w, resourceCopy)),
		host.Handle("resourceDelete", bind(w, resourceDelete)),
		host.Handle("resourceMove", bind(w, resourceMove)),
		host.Handle("resourceResolve", bind(w, resourceResolve)),
		host.Handle("resourceMkdir", bind(w, resourceMkdir)),
		host.Handle("resourceRequest", bind(w, resourceRequest)),
		host.Handle("createTerminal", bind(w, createTerminal)),
		host.Handle("disposeTerminal", bind(w, disposeTerminal)),
		host.Handle("createResourceWatch", bind(w, createResourceWatch)),
		host.Handle("invokeChangesetOperation", bind(w, invokeChangesetOperation)),
	}
}

// bind gives a handler its workspace, in the shape host.Handle takes.
func bind[P, R any](w *Workspace, f func(context.Context, *Workspace, host.Client, *P) (R, error)) func(context.Context, host.Client, *P) (R, error) {
	return func(ctx context.Context, c host.Client, p *P) (R, error) { return f(ctx, w, c, p) }
}

// Disconnected implements host.Workspace: a connection's grants end with
// it.
func (w *Workspace) Disconnected(c host.Client) {
	w.mu.Lock()
	delete(w.grants, c)
	w.mu.Unlock()
}

// Close implements host.Workspace: every terminal's processes end, and
// the workspace's goroutines stop.
func (w *Workspace) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	w.changesets.Close()
	w.closeTerminals()
	w.closeWatches()
	close(w.stop)
	w.wg.Wait()
	return nil
}

// scope is what a client may reach now: every session's working
// directories, the configured roots and its grants. With roots the
// sessions' directories add nothing: they are confined to the roots, but
// for those of sessions made before the roots were set, which stay out.
func (w *Workspace) scope(c host.Client) files.Scope {
	var s files.Scope
	if !w.Confining() {
		for _, d := range w.h.AllWorkingDirectories() {
			if p, err := files.PathOf(d); err == nil {
				s = append(s, files.Root{Dir: p, Access: files.ReadWrite})
			}
		}
	}
	for _, d := range w.roots {
		s = append(s, files.Root{Dir: d, Access: files.ReadWrite})
	}
	w.mu.Lock()
	s = append(s, w.grants[c]...)
	w.mu.Unlock()
	return s
}

func (w *Workspace) grant(c host.Client, r files.Root) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.grants[c], r) {
		w.grants[c] = append(w.grants[c], r)
	}
}

// permissionRequest is the resourceRequest payload in a PermissionDenied
// error's data.
type permissionRequest struct {
	Channel string `json:"channel"`
	URI     string `json:"uri"`
	Read    bool   `json:"read,omitzero"`
	Write   bool   `json:"write,omitzero"`
}

// wireError turns a files error into a JSON-RPC error for method.
func wireError(method string, err error) error {
	var fe *files.Error
	if !errors.As(err, &fe) {
		return &protocol.Error{Code: protocol.CodeInternalError, Message: method + ": " + err.Error()}
	}
	e := &protocol.Error{Message: method + ": " + fe.Error()}
	switch fe.Kind {
	case files.Invalid, files.TooLarge, files.WrongType:
		e.Code = protocol.CodeInvalidParams
	case files.NotFound:
		e.Code = protocol.CodeNotFound
	case files.AlreadyExists:
		e.Code = protocol.CodeAlreadyExists
	case files.Denied:
		e.Code = protocol.CodePermissionDenied
		data := map[string]any{}
		if fe.Need != 0 {
			data["request"] = permissionRequest{Channel: protocol.RootURI, URI: fe.URI, Read: fe.Need&files.Read != 0, Write: fe.Need&files.Write != 0}
		}
		if b, err := protocol.Marshal(data); err == nil {
			e.Data = jsontext.Value(b)
		}
	case files.Conflict:
		e.Code = protocol.CodeConflict
	default:
		e.Code = protocol.CodeInternalError
	}
	return e
}
