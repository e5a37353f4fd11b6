// Package files serves file operations confined to a caller's scope: the
// directories of its sessions and the roots an operator configured.
//
// Every path goes through os.Root, opened on the outermost allowed root
// that holds it, so "..", absolute symbolic links and symbolic links that
// lead out are refused by the kernel-level walk, including links swapped in
// between a check and the use. Files are opened without following to
// devices, pipes or sockets: only regular files are read or written.
//
// A regular file with more than one hard link is refused (Denied) by every
// operation that names it: read, write, copy (as the source, anywhere in a
// copied tree, or as the destination), move (source or destination),
// delete and resolve. Another of its names may be outside the allowed
// directories, and os.Root cannot tell. Reads and writes check the open
// descriptor, so a link made between a check and the use is seen too.
// Listing a directory names such files without opening them.
//
// Quick start:
//
//	svc := files.New(nil)
//	scope := files.Scope{{Dir: "/home/me/project", Access: files.ReadWrite}}
//	c, err := svc.Read(ctx, scope, "file:///home/me/project/go.mod", files.Range{})
//
// A Service is safe for concurrent use. Concurrent writes to one file are
// serialised with a lock on the file (an advisory flock on Unix, a
// mandatory LockFileEx lock on Windows), so appends never clobber each
// other, within ahpd or with other processes that lock too.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ahp-go/ahp/internal/fileinfo"
	"github.com/ahp-go/ahp/internal/filelock"
)

// Defaults for Options.
const (
	DefaultMaxReadBytes   = 8 << 20
	DefaultMaxListEntries = 100_000
)

// Options configures a Service. The zero value is usable.
type Options struct {
	// MaxReadBytes bounds one read: a whole-file read of a bigger file is
	// refused (TooLarge), and a ranged read returns at most this many
	// bytes. It also bounds the bytes an insert or a mid-file append
	// moves. Zero means DefaultMaxReadBytes.
	MaxReadBytes int64
	// MaxListEntries bounds a directory listing. Zero means
	// DefaultMaxListEntries.
	MaxListEntries int
	// Requestable are directories a caller is not given by default but
	// may be granted by asking (Service.Request). Empty means none.
	Requestable []string
}

// Service performs file operations within a Scope. Create one with New.
type Service struct {
	opts  Options
	pages sync.Pool // *[]byte of pageBuffer bytes, for ranged reads
}

// pageBuffer is the size of the pooled buffers ranged reads go through;
// a read of more than that, or of less than minPooled, gets its own.
const (
	pageBuffer = 1 << 20
	minPooled  = 64 << 10
)

// New returns a Service.
func New(opts *Options) *Service {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxListEntries <= 0 {
		o.MaxListEntries = DefaultMaxListEntries
	}
	o.Requestable = slices.Clone(o.Requestable)
	for i, d := range o.Requestable {
		o.Requestable[i] = filepath.Clean(d)
	}
	return &Service{opts: o}
}

// MaxReadBytes is the most one read returns.
func (s *Service) MaxReadBytes() int64 { return s.opts.MaxReadBytes }

// target is a resolved path: the os.Root to reach it through and the path
// relative to that root.
type target struct {
	uri  string
	abs  string
	dir  string // the root's directory
	rel  string
	root *os.Root
}

func (t *target) close() { t.root.Close() }

// open resolves uri within scope for access need and opens its root.
func (s *Service) open(scope Scope, uri string, need Access) (*target, error) {
	abs, err := PathOf(uri)
	if err != nil {
		return nil, err
	}
	dir, ok := scope.rootFor(abs, need)
	if !ok {
		return nil, s.denied(scope, uri, abs, need)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, newErr(Denied, uri, "outside the allowed directories")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, osErr(uri, "opening the allowed directory "+dir, err)
	}
	return &target{uri: uri, abs: abs, dir: dir, rel: rel, root: root}, nil
}

// denied explains why abs is out of reach, and says which access a grant
// would give when one could.
func (s *Service) denied(scope Scope, uri, abs string, need Access) *Error {
	for _, d := range s.opts.Requestable {
		if within(d, abs) {
			return &Error{Kind: Denied, URI: uri, Need: need, Msg: fmt.Sprintf("%s access is not granted; ask for it with resourceRequest", need)}
		}
	}
	if scope.Contains(abs, Read) {
		return newErr(Denied, uri, "only read access is allowed here")
	}
	return newErr(Denied, uri, "outside the allowed directories (the sessions' working directories and the configured roots)")
}

// Request asks for access need to uri. It returns the root to add to the
// caller's scope: the requestable directory holding uri. A uri already in
// scope with that access gives a zero Root and no error; one outside every
// requestable directory is refused.
func (s *Service) Request(scope Scope, uri string, need Access) (Root, error) {
	abs, err := PathOf(uri)
	if err != nil {
		return Root{}, err
	}
	if need == 0 {
		need = Read // a request with neither flag means read
	}
	if scope.Contains(abs, need) {
		return Root{}, nil
	}
	for _, d := range s.opts.Requestable {
		if within(d, abs) {
			return Root{Dir: d, Access: need}, nil
		}
	}
	return Root{}, newErr(Denied, uri, "this host does not grant access outside the sessions' working directories and the configured roots")
}

// Range selects part of a file. The zero Range is the whole file.
type Range struct {
	// Set says the read is ranged; otherwise Offset and Length are ignored.
	Set    bool
	Offset int64
	// Length is the most bytes to return; 0 means up to the read limit.
	Length int64
}

// Content is what Read returns.
type Content struct {
	Data []byte
	// Offset is where Data starts in the file.
	Offset int64
	// Size is the file's size when it was read.
	Size int64
	// EOF says Data reaches the end of the file.
	EOF bool
	// ContentType is the sniffed media type.
	ContentType string

	pool *sync.Pool // where Data's buffer goes back on Release, or nil
	buf  *[]byte
}

// Release gives the buffer holding Data back for reuse by later reads.
// Data must not be used after. Calling it is optional.
func (c *Content) Release() {
	if c.pool != nil {
		c.pool.Put(c.buf)
		c.pool, c.buf, c.Data = nil, nil, nil
	}
}

const openRead = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// Read reads a file, or the part of it r selects.
func (s *Service) Read(ctx context.Context, scope Scope, uri string, r Range) (*Content, error) {
	t, err := s.open(scope, uri, Read)
	if err != nil {
		return nil, err
	}
	defer t.close()
	f, fi, err := openRegular(t, openRead, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, max := fi.Size(), s.opts.MaxReadBytes
	c := &Content{Size: size}
	if !r.Set {
		if size > max {
			return nil, newErr(TooLarge, uri, "the file is %d bytes, over the %d-byte read limit; read it in ranges", size, max)
		}
		data, err := io.ReadAll(io.LimitReader(f, max+1))
		if err != nil {
			return nil, osErr(uri, "reading", err)
		}
		if int64(len(data)) > max {
			return nil, newErr(TooLarge, uri, "the file grew over the %d-byte read limit while being read", max)
		}
		c.Data, c.Size, c.EOF = data, int64(len(data)), true
	} else {
		if r.Offset < 0 || r.Length < 0 {
			return nil, newErr(Invalid, uri, "a range needs a non-negative offset and length")
		}
		n := max
		if r.Length > 0 {
			n = min(r.Length, max)
		}
		n = max64(0, min(n, size-r.Offset))
		var buf []byte
		if n >= minPooled && n <= pageBuffer {
			// Paging through a large file: one buffer goes round, so
			// its pages do not each cost a new one.
			c.pool = &s.pages
			if p, ok := s.pages.Get().(*[]byte); ok {
				c.buf = p
			} else {
				b := make([]byte, pageBuffer)
				c.buf = &b
			}
			buf = (*c.buf)[:n]
		} else {
			buf = make([]byte, n)
		}
		got, err := f.ReadAt(buf, r.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			c.Release()
			return nil, osErr(uri, "reading", err)
		}
		c.Data, c.Offset = buf[:got], r.Offset
		c.EOF = r.Offset+int64(got) >= size
	}
	c.ContentType = contentType(t.abs, c.Data, c.Offset == 0)
	if err := ctx.Err(); err != nil {
		c.Release()
		return nil, err
	}
	return c, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// openRegular opens t's path with flag and refuses anything but a regular
// file. The open does not block on pipes and does not take a terminal, so
// a device or FIFO swapped in is seen and refused before any byte moves.
func openRegular(t *target, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := t.root.OpenFile(t.rel, flag, perm)
	if err != nil {
		return nil, nil, osErr(t.uri, "opening", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, osErr(t.uri, "opening", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, newErr(WrongType, t.uri, "it is a directory")
		}
		return nil, nil, newErr(WrongType, t.uri, "not a regular file (%s)", fileinfo.Kind(fi.Mode()))
	}
	if n, linked := fileinfo.LinkedFile(f, fi); linked {
		f.Close()
		return nil, nil, linkedErr(t.uri, n)
	}
	return f, fi, nil
}

// single refuses a regular file with more than one hard link: another of
// its names may be outside the allowed directories.
func single(uri string, fi fs.FileInfo) *Error {
	if n, linked := fileinfo.Linked(fi); linked {
		return linkedErr(uri, n)
	}
	return nil
}

func linkedErr(uri string, n uint64) *Error {
	return newErr(Denied, uri, "the file has %d hard links; files with more than one are refused, since another name may be outside the allowed directories", n)
}

// contentType guesses a media type from the name, then from the first
// bytes when they are the file's start.
func contentType(name string, head []byte, atStart bool) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	if atStart && len(head) > 0 {
		return http.DetectContentType(head[:min(len(head), 512)])
	}
	return "application/octet-stream"
}

// WriteMode says where written data goes.
type WriteMode int

// Write modes, as ResourceWriteMode defines them.
const (
	// Truncate keeps existing[:Position] and writes Data after it.
	Truncate WriteMode = iota
	// Append inserts Data Position bytes before the end of the file.
	Append
	// Insert splices Data in at Position from the start.
	Insert
)

// WriteRequest is one write.
type WriteRequest struct {
	Data     []byte
	Mode     WriteMode
	Position int64
	// CreateOnly fails when the file exists.
	CreateOnly bool
	// IfMatch, when set, must equal the file's current ETag.
	IfMatch string
}

// Write writes to a file, creating it when missing. Writers of one file
// are serialised by an exclusive flock, and the end of the file is read
// under it, so concurrent appends all land, in some order, intact.
func (s *Service) Write(ctx context.Context, scope Scope, uri string, w WriteRequest) error {
	if w.Position < 0 {
		return newErr(Invalid, uri, "position must not be negative")
	}
	if w.CreateOnly && w.IfMatch != "" {
		return newErr(Invalid, uri, "createOnly and ifMatch cannot both hold")
	}
	t, err := s.open(scope, uri, Write)
	if err != nil {
		return err
	}
	defer t.close()
	flag := os.O_RDWR | syscall.O_NONBLOCK | syscall.O_NOCTTY
	switch {
	case w.CreateOnly:
		flag |= os.O_CREATE | os.O_EXCL
	case w.IfMatch == "":
		flag |= os.O_CREATE
	}
	f, _, err := openRegular(t, flag, 0o666)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(ctx, f); err != nil {
		return osErr(uri, "locking", err)
	}
	defer filelock.Unlock(f)
	fi, err := f.Stat() // under the lock: the size other writers left
	if err != nil {
		return osErr(uri, "writing", err)
	}
	if w.IfMatch != "" && ETag(fi) != w.IfMatch {
		return newErr(Conflict, uri, "the file changed since its etag was read")
	}
	size := fi.Size()
	var at int64
	switch w.Mode {
	case Truncate:
		at = w.Position
	case Append:
		at = size - w.Position
	case Insert:
		at = w.Position
	default:
		return newErr(Invalid, uri, "unknown write mode")
	}
	if at < 0 || at > size {
		return newErr(Invalid, uri, "position %d is outside the %d-byte file", w.Position, size)
	}
	data := w.Data
	if w.Mode != Truncate && at < size {
		// Move the bytes after the insertion point behind the new data.
		if size-at > s.opts.MaxReadBytes {
			return newErr(TooLarge, uri, "inserting would move %d bytes, over the %d-byte limit", size-at, s.opts.MaxReadBytes)
		}
		tail := make([]byte, size-at)
		if _, err := f.ReadAt(tail, at); err != nil && !errors.Is(err, io.EOF) {
			return osErr(uri, "reading", err)
		}
		data = append(slices.Clip(data), tail...)
	}
	if w.Mode == Truncate {
		if err := f.Truncate(at); err != nil {
			return osErr(uri, "truncating", err)
		}
	}
	if _, err := f.WriteAt(data, at); err != nil {
		return osErr(uri, "writing", err)
	}
	return nil
}

// lockFile takes an exclusive lock on f (flock on Unix, LockFileEx on
// Windows), giving up when ctx ends.
func lockFile(ctx context.Context, f *os.File) error {
	for {
		err := filelock.TryLock(f)
		if err == nil {
			return nil
		}
		if !errors.Is(err, filelock.ErrLocked) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// ETag is the version token of a file: it changes when its size,
// modification time or identity (the inode on Unix, the creation time on
// Windows) does.
func ETag(fi fs.FileInfo) string {
	return fmt.Sprintf("%x-%x-%x", fi.ModTime().UnixNano(), fi.Size(), fileIdentity(fi))
}

// Entry is one directory entry.
type Entry struct {
	Name string
	Dir  bool
}

// List lists a directory, sorted by name. A symbolic link is listed as what
// it leads to; one that leads nowhere reachable is listed as a file.
func (s *Service) List(ctx context.Context, scope Scope, uri string) ([]Entry, error) {
	t, err := s.open(scope, uri, Read)
	if err != nil {
		return nil, err
	}
	defer t.close()
	d, err := openDir(t.root, t.rel)
	if err != nil {
		return nil, osErr(uri, "listing", err)
	}
	defer d.Close()
	var out []Entry
	for {
		des, err := d.ReadDir(1024)
		for _, de := range des {
			e := Entry{Name: de.Name(), Dir: de.IsDir()}
			if de.Type()&fs.ModeSymlink != 0 {
				if fi, err := t.root.Stat(filepath.Join(t.rel, de.Name())); err == nil {
					e.Dir = fi.IsDir()
				}
			}
			out = append(out, e)
		}
		if len(out) > s.opts.MaxListEntries {
			return nil, newErr(TooLarge, uri, "the directory has more than %d entries", s.opts.MaxListEntries)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(des) == 0) {
			break
		}
		if err != nil {
			return nil, osErr(uri, "listing", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Mkdir creates a directory and its missing parents. An existing
// directory is success; an existing file is AlreadyExists.
func (s *Service) Mkdir(ctx context.Context, scope Scope, uri string) error {
	t, err := s.open(scope, uri, Write)
	if err != nil {
		return err
	}
	defer t.close()
	if err := t.root.MkdirAll(t.rel, 0o777); err != nil {
		if fi, serr := t.root.Stat(t.rel); serr == nil && !fi.IsDir() {
			return newErr(AlreadyExists, uri, "a file is in the way")
		}
		e := osErr(uri, "creating the directory", err)
		if e.Kind == WrongType { // a parent is a file
			e.Kind = AlreadyExists
		}
		return e
	}
	return nil
}

// Delete removes a file or an empty directory, or with recursive a
// directory and everything in it. An allowed root itself cannot be
// removed.
func (s *Service) Delete(ctx context.Context, scope Scope, uri string, recursive bool) error {
	t, err := s.open(scope, uri, Write)
	if err != nil {
		return err
	}
	defer t.close()
	if t.rel == "." {
		return newErr(Denied, uri, "an allowed directory itself cannot be deleted")
	}
	fi, err := t.root.Lstat(t.rel)
	if err != nil {
		return osErr(uri, "deleting", err)
	}
	if err := single(uri, fi); err != nil {
		return err
	}
	if recursive {
		err = t.root.RemoveAll(t.rel)
	} else {
		err = t.root.Remove(t.rel)
	}
	if err != nil {
		return osErr(uri, "deleting", err)
	}
	return nil
}

// Info is what Resolve returns.
type Info struct {
	// URI is the canonical URI: symbolic links resolved when followed.
	URI string
	// Type is "file", "directory" or "symlink" (only when not
	// following); devices and pipes are "file".
	Type    string
	Size    int64
	HasSize bool
	ModTime time.Time
	ETag    string
	// ContentType is set for regular files, from the name.
	ContentType string
}

// Resolve stats a path. With follow, symbolic links are followed (within
// the scope) and Info.URI is the real path; without, a link is described
// itself.
func (s *Service) Resolve(ctx context.Context, scope Scope, uri string, follow bool) (*Info, error) {
	t, err := s.open(scope, uri, Read)
	if err != nil {
		return nil, err
	}
	defer t.close()
	info := &Info{URI: URIOf(t.abs)}
	var fi fs.FileInfo
	if follow {
		fi, err = t.root.Stat(t.rel)
		if err == nil {
			real, rerr := realPath(t.root, t.rel)
			if rerr != nil {
				return nil, osErr(uri, "resolving", rerr)
			}
			info.URI = URIOf(filepath.Join(t.dir, real))
		}
	} else {
		fi, err = t.root.Lstat(t.rel)
	}
	if err != nil {
		return nil, osErr(uri, "resolving", err)
	}
	if err := single(uri, fi); err != nil {
		return nil, err
	}
	info.ModTime = fi.ModTime()
	switch {
	case fi.IsDir():
		info.Type = "directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		info.Type = "symlink"
	default:
		info.Type = "file"
		info.Size, info.HasSize = fi.Size(), true
		info.ETag = ETag(fi)
		if fi.Mode().IsRegular() {
			info.ContentType = contentType(t.abs, nil, false)
		}
	}
	return info, nil
}

// realPath resolves the symbolic links in rel within root, lexically, the
// way os.Root does, and returns the resulting path relative to root.
func realPath(root *os.Root, rel string) (string, error) {
	var done []string
	todo := splitPath(rel)
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", errors.New("path escapes from parent")
			}
			done = done[:len(done)-1]
			continue
		}
		p := filepath.Join(append(slices.Clone(done), c)...)
		fi, err := root.Lstat(p)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > 40 {
			return "", syscall.ELOOP
		}
		link, err := root.Readlink(p)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(link) {
			return "", errors.New("path escapes from parent")
		}
		todo = append(splitPath(link), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}
