package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ahp-go/ahp/internal/fileinfo"
	"github.com/ahp-go/ahp/protocol"
)

// The host serves fs/read_text_file and fs/write_text_file inside the
// session's working directory only. Paths are resolved through an os.Root
// opened on that directory, so a symbolic link that leads out of it is
// refused like a path that does; files larger than Options.MaxFileBytes
// are refused too. Only regular files with a single link are served: the
// type is checked before opening (a FIFO would block the open, a device
// could be read forever), files are opened non-blocking and checked again
// on the open descriptor, and a file with more than one hard link is
// refused, since another of its names may be outside the directory.
// Refusals are invalid-params errors whose message says why.

// refuse returns the error the agent receives for a refused file request.
func refuse(format string, args ...any) error {
	return acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(format, args...)})
}

// relPath returns path relative to the working directory, refusing paths
// outside it.
func (s *session) relPath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", refuse("%q is not an absolute path", path)
	}
	clean := filepath.Clean(path)
	for _, dir := range []string{s.dir, s.realDir} {
		rel, err := filepath.Rel(dir, clean)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, nil
		}
	}
	return "", refuse("%s is outside the session's working directory %s", path, s.dir)
}

// fsError turns an error of the root into one the agent can read.
func (s *session) fsError(op, path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// ACP's "resource not found" code.
		return &acpsdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": path + " does not exist", "uri": path}}
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		return refuse("%s leads outside the session's working directory %s (through a symbolic link)", path, s.dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return acpsdk.NewInternalError(map[string]any{"error": fmt.Sprintf("%s %s: %v", op, path, err)})
}

// servable refuses a file that is not a regular file with a single link.
func servable(st fs.FileInfo, path string) error {
	if !st.Mode().IsRegular() {
		return refuse("%s is not a regular file (%s)", path, fileinfo.Kind(st.Mode()))
	}
	if n := fileinfo.Links(st); n > 1 {
		return refuse("%s has %d hard links; files with more than one are refused, since another name may be outside the working directory", path, n)
	}
	return nil
}

// openChecked opens a file of the root after checking its type, without
// blocking (a FIFO swapped in after the check opens at once), and checks
// the open file again, so that what is served is the file checked.
func openChecked(root *os.Root, rel, path string, flag int, s *session, op string) (*os.File, error) {
	st, err := root.Stat(rel)
	if err != nil {
		return nil, s.fsError(op, path, err)
	}
	if err := servable(st, path); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(rel, flag|openNonBlocking, 0o644)
	if err != nil {
		return nil, s.fsError(op, path, err)
	}
	fst, err := f.Stat()
	if err == nil {
		err = servable(fst, path)
	}
	if err == nil {
		// Where a FileInfo does not count links (Windows), the handle does.
		if n, linked := fileinfo.LinkedFile(f, fst); linked {
			err = refuse("%s has %d hard links; files with more than one are refused, since another name may be outside the working directory", path, n)
		}
	}
	if err == nil && !os.SameFile(st, fst) {
		err = refuse("%s changed while it was opened", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readLimited reads a regular file of the root, refusing one larger than
// the limit.
func (s *session) readLimited(root *os.Root, rel, path string) (string, error) {
	f, err := openChecked(root, rel, path, os.O_RDONLY, s, "read")
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", s.fsError("read", path, err)
	}
	max := s.b.opts.MaxFileBytes
	if st.Size() > max {
		return "", refuse("%s is %d bytes; files over %d bytes are refused", path, st.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", s.fsError("read", path, err)
	}
	if int64(len(b)) > max {
		return "", refuse("%s is over %d bytes; it is refused", path, max)
	}
	if !utf8.Valid(b) {
		return "", refuse("%s is not a UTF-8 text file", path)
	}
	return string(b), nil
}

// ReadTextFile serves fs/read_text_file: the whole file, or Limit lines
// from line Line (1-based).
func (c *client) ReadTextFile(_ context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	s := c.s
	if s.b.cfg.DisableFileSystem {
		return acpsdk.ReadTextFileResponse{}, acpsdk.NewMethodNotFound("fs/read_text_file")
	}
	rel, err := s.relPath(req.Path)
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, err
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, s.fsError("read", req.Path, err)
	}
	defer root.Close()
	text, err := s.readLimited(root, rel, req.Path)
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, err
	}
	if req.Line != nil || req.Limit != nil {
		text = lineRange(text, req.Line, req.Limit)
	}
	return acpsdk.ReadTextFileResponse{Content: text}, nil
}

// lineRange returns limit lines of text from line (1-based); nil means
// from the start, or to the end.
func lineRange(text string, line, limit *int) string {
	from := 1
	if line != nil && *line > 1 {
		from = *line
	}
	var b strings.Builder
	n := 0
	for l := range strings.Lines(text) {
		n++
		if n < from {
			continue
		}
		if limit != nil && n >= from+*limit {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// WriteTextFile serves fs/write_text_file, creating the file (and its
// directories) when needed. The write shows on the running turn as a file
// edit: on the one tool call running, or else as a tool call of its own.
func (c *client) WriteTextFile(_ context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	s := c.s
	if s.b.cfg.DisableFileSystem {
		return acpsdk.WriteTextFileResponse{}, acpsdk.NewMethodNotFound("fs/write_text_file")
	}
	rel, err := s.relPath(req.Path)
	if err != nil {
		return acpsdk.WriteTextFileResponse{}, err
	}
	if max := s.b.opts.MaxFileBytes; int64(len(req.Content)) > max {
		return acpsdk.WriteTextFileResponse{}, refuse("the content for %s is %d bytes; files over %d bytes are refused", req.Path, len(req.Content), max)
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return acpsdk.WriteTextFileResponse{}, s.fsError("write", req.Path, err)
	}
	defer root.Close()
	old, existed := "", false
	if st, err := root.Stat(rel); err == nil {
		if err := servable(st, req.Path); err != nil {
			return acpsdk.WriteTextFileResponse{}, err
		}
		if st.Size() <= s.b.opts.MaxFileBytes {
			old, _ = s.readLimited(root, rel, req.Path)
		}
		existed = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return acpsdk.WriteTextFileResponse{}, s.fsError("write", req.Path, err)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return acpsdk.WriteTextFileResponse{}, s.fsError("write", req.Path, err)
		}
	}
	if err := writeChecked(root, rel, req.Path, req.Content, s); err != nil {
		return acpsdk.WriteTextFileResponse{}, err
	}
	s.reflectWrite(c.p, req.SessionId, filepath.Join(s.dir, rel), rel, old, existed, req.Content)
	return acpsdk.WriteTextFileResponse{}, nil
}

// writeChecked replaces the content of a file of the root, creating it
// when missing, after checking on the open descriptor that it is a
// regular file with a single link: the write never goes through a FIFO,
// a device or a hard link to a file elsewhere.
func writeChecked(root *os.Root, rel, path, content string, s *session) error {
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|openNonBlocking, 0o644)
	if err != nil {
		return s.fsError("write", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s.fsError("write", path, err)
	}
	if err := servable(st, path); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return s.fsError("write", path, err)
	}
	if _, err := f.WriteString(content); err != nil {
		return s.fsError("write", path, err)
	}
	if err := f.Close(); err != nil {
		return s.fsError("write", path, err)
	}
	return nil
}

// reflectWrite shows a file write on the chat's running turn.
func (s *session) reflectWrite(p *process, id acpsdk.SessionId, path, rel, old string, existed bool, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byACP[acpKey{p.gen, id}]
	if c == nil || c.running == nil || c.running.ended {
		return
	}
	t := c.running
	edit := fileEdit(path, old, existed, content)
	var running *tool
	n := 0
	for _, tc := range t.tools {
		if tc.status == toolRunning {
			running, n = tc, n+1
		}
	}
	if n == 1 {
		running.edits = append(running.edits, edit)
		s.emit(t, &protocol.ChatToolCallContentChangedAction{TurnID: t.id, ToolCallID: running.id, Content: running.allContent()})
		return
	}
	tc := &tool{id: t.nextID("write"), kind: "edit", title: "Write " + filepath.ToSlash(rel), edits: []protocol.ToolResultContent{edit}}
	if !s.emit(t, &protocol.ChatToolCallStartAction{TurnID: t.id, ToolCallID: tc.id, ToolName: "write_text_file", DisplayName: tc.title}) {
		return
	}
	t.tools[tc.id] = tc
	t.textPart, t.thoughtPart = "", ""
	s.ready(t, tc, true)
	tc.title = "Wrote " + filepath.ToSlash(rel)
	s.complete(t, tc, true)
}
