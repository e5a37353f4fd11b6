// Package watch reports file changes under a directory, on fsnotify:
// recursive or not, filtered by include and exclude globs, batched.
//
// Quick start:
//
//	w, err := watch.Start(watch.Options{Root: dir, Recursive: true, Excludes: []string{".git"}},
//		func(batch []watch.Change) { ... })
//	defer w.Close()
//
// A recursive watch adds one OS watch per directory. When the OS limit on
// watches (fs.inotify.max_user_watches on Linux) stops it, Start fails
// with ErrLimit and releases what it had added: a watch is whole or it is
// not there. Directories created later are added as they appear, and the
// files already in them are reported as added.
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ChangeType is what happened to a path.
type ChangeType int

// Change types.
const (
	Added ChangeType = iota + 1
	Updated
	Deleted
)

func (t ChangeType) String() string {
	switch t {
	case Added:
		return "added"
	case Updated:
		return "updated"
	case Deleted:
		return "deleted"
	}
	return "unknown"
}

// Change is one reported change.
type Change struct {
	Path string // absolute
	Type ChangeType
}

// Options says what to watch.
type Options struct {
	// Root is an absolute directory (or, not recursive, a file).
	Root string
	// Recursive reports changes anywhere below Root; otherwise only Root
	// itself and, for a directory, its direct children.
	Recursive bool
	// Includes, when set, restrict reports to paths (relative to Root,
	// with "/") matching one of them or lying under a match. Patterns
	// are path.Match globs where "**" matches any number of segments.
	Includes []string
	// Excludes drop paths matching one of them or lying under a match;
	// excluded directories are not watched at all.
	Excludes []string
	// Batch is how long changes gather before delivery. Zero means 100ms.
	Batch time.Duration
	// MaxBatch bounds the changes in one delivery. Zero means 1000.
	MaxBatch int
}

// ErrLimit is the error when the operating system's limit on watches
// stops a watch.
var ErrLimit = errors.New("watch: the operating system's limit on file watches was reached")

// Watch is a running watch. Close it to release its OS watches.
type Watch struct {
	opts    Options
	fw      *fsnotify.Watcher
	deliver func([]Change)
	single  string // for a file root: its base name
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	mu      sync.Mutex
	pending map[string]ChangeType
	order   []string
}

// Start starts watching; deliver receives each batch on the watch's own
// goroutine, in order, never empty.
func Start(opts Options, deliver func([]Change)) (*Watch, error) {
	if !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("watch: root %q is not absolute", opts.Root)
	}
	opts.Root = filepath.Clean(opts.Root)
	if opts.Batch <= 0 {
		opts.Batch = 100 * time.Millisecond
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1000
	}
	for _, p := range append(append([]string(nil), opts.Includes...), opts.Excludes...) {
		if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("watch: bad pattern %q: %w", p, err)
		}
	}
	fi, err := os.Stat(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, limitErr(fmt.Errorf("watch: %w", err))
	}
	w := &Watch{opts: opts, fw: fw, deliver: deliver, done: make(chan struct{}), pending: map[string]ChangeType{}}
	switch {
	case !fi.IsDir():
		if opts.Recursive {
			opts.Recursive = false
			w.opts.Recursive = false
		}
		w.single = filepath.Base(opts.Root)
		err = fw.Add(filepath.Dir(opts.Root))
	case opts.Recursive:
		err = w.addTree(opts.Root, false)
	default:
		err = fw.Add(opts.Root)
	}
	if err != nil {
		fw.Close()
		return nil, limitErr(err)
	}
	w.wg.Go(w.loop)
	return w, nil
}

// limitErr recognises the OS watch limit (ENOSPC from inotify, EMFILE
// for instances).
func limitErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
		return fmt.Errorf("%w (%v): raise fs.inotify.max_user_watches or fs.inotify.max_user_instances, or watch less (excludes, or not recursive)", ErrLimit, err)
	}
	return err
}

// addTree watches dir and every directory below it that is not excluded.
// With report, the files found are reported as added (a directory that
// appeared after the watch started).
func (w *Watch) addTree(dir string, report bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished or unreadable below the root: skip it
		}
		rel := w.rel(p)
		if p != w.opts.Root && excluded(w.opts.Excludes, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.fw.Add(p); err != nil {
				if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
					return err
				}
				return nil // removed meanwhile
			}
		}
		if report && p != dir {
			w.note(p, Added)
		}
		return nil
	})
}

func (w *Watch) rel(p string) string {
	r, err := filepath.Rel(w.opts.Root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// wanted reports whether a change to p is reported.
func (w *Watch) wanted(p string) bool {
	if w.single != "" {
		return p == w.opts.Root
	}
	if p == w.opts.Root {
		return true
	}
	rel := w.rel(p)
	if strings.HasPrefix(rel, "../") {
		return false
	}
	if !w.opts.Recursive && strings.Contains(rel, "/") {
		return false
	}
	if excluded(w.opts.Excludes, rel) {
		return false
	}
	return len(w.opts.Includes) == 0 || excluded(w.opts.Includes, rel)
}

func (w *Watch) loop() {
	tick := time.NewTicker(w.opts.Batch)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			_ = err // overflow: the kernel dropped events; nothing to report them as
		case <-tick.C:
			w.flush()
		case <-w.done:
			return
		}
	}
}

func (w *Watch) event(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	switch {
	case ev.Has(fsnotify.Create):
		if w.opts.Recursive {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() && !excluded(w.opts.Excludes, w.rel(p)) {
				if err := w.addTree(p, true); err != nil {
					// The limit was reached while growing: say so in the
					// stream rather than watching half of it silently.
					w.note(p, Added)
				}
			}
		}
		w.note(p, Added)
	case ev.Has(fsnotify.Write):
		w.note(p, Updated)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		w.note(p, Deleted)
	}
}

// note records a change, folding it into one already pending for the
// path: added then updated stays added; added then deleted goes away.
func (w *Watch) note(p string, t ChangeType) {
	if !w.wanted(p) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	prev, ok := w.pending[p]
	switch {
	case !ok:
		w.pending[p] = t
		w.order = append(w.order, p)
	case prev == Added && t == Updated:
	case prev == Added && t == Deleted:
		w.pending[p] = Deleted // it may have existed before: say it is gone
	case prev == Deleted && t == Added:
		w.pending[p] = Updated
	default:
		w.pending[p] = t
	}
}

func (w *Watch) flush() {
	w.mu.Lock()
	if len(w.order) == 0 {
		w.mu.Unlock()
		return
	}
	batch := make([]Change, 0, len(w.order))
	for _, p := range w.order {
		batch = append(batch, Change{Path: p, Type: w.pending[p]})
	}
	clear(w.pending)
	w.order = w.order[:0]
	w.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), w.opts.MaxBatch)
		w.deliver(batch[:n])
		batch = batch[n:]
	}
}

// Close stops the watch and releases its OS watches. Changes not yet
// delivered are dropped.
func (w *Watch) Close() error {
	w.once.Do(func() { close(w.done) })
	err := w.fw.Close()
	w.wg.Wait()
	return err
}

// excluded reports whether rel, or a directory above it, matches one of
// the patterns.
func excluded(patterns []string, rel string) bool {
	if len(patterns) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for _, p := range patterns {
		ps := strings.Split(strings.Trim(p, "/"), "/")
		for n := 1; n <= len(segs); n++ {
			if matchSegs(ps, segs[:n]) {
				return true
			}
		}
	}
	return false
}

// matchSegs matches path segments against pattern segments, "**" standing
// for any number of segments.
func matchSegs(ps, segs []string) bool {
	if len(ps) == 0 {
		return len(segs) == 0
	}
	if ps[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(ps[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(ps[0], segs[0])
	return ok && matchSegs(ps[1:], segs[1:])
}
