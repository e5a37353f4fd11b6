package files

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// Kind classifies an Error. The host maps each kind to a wire error code.
type Kind int

// Error kinds.
const (
	// Invalid is a malformed request: not a file: URI, a relative path, a
	// NUL byte, a ".." segment, a bad range or write position.
	Invalid Kind = iota + 1
	// NotFound: the resource does not exist.
	NotFound
	// AlreadyExists: the target exists and the request forbids that.
	AlreadyExists
	// Denied: the path is outside the caller's scope, leaves it through a
	// symbolic link, or the operating system refused access.
	Denied
	// Conflict: an ifMatch token no longer matches the file.
	Conflict
	// TooLarge: a whole-file read of a file over the read limit, or a
	// directory with more entries than the list limit.
	TooLarge
	// WrongType: a directory where a file is needed or the reverse, a
	// device, socket or pipe, a non-empty directory deleted without
	// recursive.
	WrongType
	// Failed is any other input/output error.
	Failed
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case AlreadyExists:
		return "already exists"
	case Denied:
		return "permission denied"
	case Conflict:
		return "conflict"
	case TooLarge:
		return "too large"
	case WrongType:
		return "wrong type"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is the error every Service method returns.
type Error struct {
	Kind Kind
	// URI is the resource the error is about.
	URI string
	// Need is the access that would have allowed the operation, set on
	// Denied errors when a grant (Service.Grant) could give it; zero when
	// no grant would help.
	Need Access
	// Msg says what went wrong, for people.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.URI)
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err, or Failed when err is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failed
}

func newErr(k Kind, uri, format string, args ...any) *Error {
	return &Error{Kind: k, URI: uri, Msg: fmt.Sprintf(format, args...)}
}

// osErr classifies an error from the operating system or os.Root.
func osErr(uri, doing string, err error) *Error {
	e := &Error{Kind: Failed, URI: uri, Msg: doing, Err: err}
	err = sysErr(err)
	switch {
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which it also matches
		e.Kind, e.Msg = WrongType, doing+": the directory is not empty (set recursive to delete it)"
	case errors.Is(err, fs.ErrNotExist):
		e.Kind = NotFound
	case errors.Is(err, fs.ErrExist):
		e.Kind = AlreadyExists
	case errors.Is(err, syscall.EISDIR):
		e.Kind, e.Msg = WrongType, doing+": it is a directory"
	case errors.Is(err, syscall.ENOTDIR):
		e.Kind, e.Msg = WrongType, doing+": a path component is not a directory"
	case errors.Is(err, syscall.ELOOP):
		e.Kind, e.Msg = Denied, doing+": too many symbolic links, or a symbolic link where none is allowed"
	case errors.Is(err, fs.ErrPermission):
		e.Kind = Denied
	case isEscape(err):
		e.Kind, e.Msg = Denied, doing+": the path leaves the allowed directory"
	}
	return e
}

// isEscape reports whether err is os.Root refusing a path that leads out of
// the root (through "..", an absolute or an outward symbolic link). The
// standard library does not export that error, so it is recognised by its
// text.
func isEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err != nil && strings.Contains(err.Error(), "path escapes")
}
