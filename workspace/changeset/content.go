package changeset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ahp-go/ahp/protocol"
)

// ContentScheme is the scheme of the content references of files as git
// holds them (a side of a file at a commit):
//
//	ahp-changeset-content:/<session key>/<directory key>/<commit>/<path>
//
// where the path is relative to the changeset's working directory, each
// segment percent-encoded. resourceRead serves them through Manager.Read,
// and only while the session has a changeset on that directory: a content
// URI reaches the session's own directory and nothing else.
const ContentScheme = "ahp-changeset-content:"

// contentURI is the content reference of a file at a revision.
func contentURI(session, key, rev, rel string) string {
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return ContentScheme + "/" + session + "/" + key + "/" + rev + "/" + strings.Join(segs, "/")
}

// IsContentURI reports whether uri is a changeset content reference.
func IsContentURI(uri string) bool { return strings.HasPrefix(uri, ContentScheme) }

// ReadError is why a content read failed; Code is the JSON-RPC code to
// answer with.
type ReadError struct {
	Code    protocol.ErrorCode
	Message string
}

func (e *ReadError) Error() string { return e.Message }

// Read returns the content a changeset content URI refers to, at most
// MaxContentBytes of it.
func (m *Manager) Read(ctx context.Context, uri string) ([]byte, error) {
	rest, ok := strings.CutPrefix(uri, ContentScheme+"/")
	if !ok {
		return nil, &ReadError{protocol.CodeInvalidParams, fmt.Sprintf("%q is not a changeset content URI", clip(uri))}
	}
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || !isHex(parts[2]) || parts[3] == "" {
		return nil, &ReadError{protocol.CodeInvalidParams, fmt.Sprintf("malformed changeset content URI %q", clip(uri))}
	}
	rel, err := relOf(parts[3])
	if err != nil {
		return nil, &ReadError{protocol.CodeInvalidParams, fmt.Sprintf("changeset content URI %q: %v", clip(uri), err)}
	}
	m.mu.Lock()
	t := m.byID[parts[0]]
	m.mu.Unlock()
	var g *git
	if t != nil {
		t.mu.Lock()
		for _, s := range t.sets {
			if s.key == parts[1] {
				g = s.g
				break
			}
		}
		t.mu.Unlock()
	}
	if g == nil {
		return nil, &ReadError{protocol.CodeNotFound, fmt.Sprintf("no changeset content %s", clip(uri))}
	}
	data, err := g.show(ctx, parts[2], rel, m.opts.MaxContentBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, &ReadError{protocol.CodeInvalidParams, fmt.Sprintf("%s is over the read limit of %d bytes", clip(uri), m.opts.MaxContentBytes)}
		}
		return nil, &ReadError{protocol.CodeNotFound, fmt.Sprintf("no content at %s: %v", clip(uri), err)}
	}
	return data, nil
}

// relOf decodes the path of a content URI and checks that it stays inside
// its directory.
func relOf(escaped string) (string, error) {
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", err
		}
		if d == "" || d == "." || d == ".." || strings.ContainsAny(d, "/\x00") {
			return "", errors.New("the path must be relative, without empty, . or .. segments")
		}
		segs[i] = d
	}
	rel := filepath.Join(segs...)
	if !filepath.IsLocal(rel) {
		return "", errors.New("the path leaves its directory")
	}
	return rel, nil
}

func isHex(s string) bool {
	if len(s) < 40 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// countLines counts the lines of a file that git does not track, reading
// at most maxCountBytes; counted is false for a larger or unreadable file
// and binary is set for a file with a NUL byte in its first 8000 bytes
// (git's own test). read is how many bytes it read.
func countLines(dir, rel string) (lines int64, binary, counted bool, read int64) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, false, false, 0
	}
	defer root.Close()
	info, err := root.Lstat(rel)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxCountBytes {
		return 0, false, false, 0
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, false, false, 0
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, false, false, 0 // swapped for something else since the Lstat
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCountBytes+1))
	read = int64(len(data))
	if err != nil || len(data) > maxCountBytes {
		return 0, false, false, read
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return 0, true, true, read
	}
	n := int64(bytes.Count(data, []byte{'\n'}))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n, false, true, read
}
