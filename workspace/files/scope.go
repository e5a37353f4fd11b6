package files

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/internal/fileuri"
)

// Access is what a caller may do under a root.
type Access uint8

// Access bits.
const (
	Read Access = 1 << iota
	Write

	ReadWrite = Read | Write
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read and write"
	}
	return "none"
}

// Root is one directory tree a caller may reach, and how.
type Root struct {
	// Dir is an absolute directory path.
	Dir string
	// Access is what the caller may do beneath Dir.
	Access Access
}

// Scope is the set of roots one caller may reach. Everything outside them
// is refused.
type Scope []Root

// Contains reports whether the scope gives access need to the absolute
// path p.
func (s Scope) Contains(p string, need Access) bool {
	_, ok := s.rootFor(p, need)
	return ok
}

// rootFor returns the outermost root that holds p with access need. The
// outermost is chosen so that a symbolic link between two nested roots
// stays inside.
func (s Scope) rootFor(p string, need Access) (string, bool) {
	best, found := "", false
	for _, r := range s {
		if r.Access&need != need || !within(r.Dir, p) {
			continue
		}
		if !found || len(r.Dir) < len(best) {
			best, found = r.Dir, true
		}
	}
	return best, found
}

// PathOf returns the absolute path a file: URI names. It refuses other
// schemes, hosts other than localhost, relative paths, NUL bytes and ".."
// segments, and cleans away "." segments and doubled slashes.
func PathOf(uri string) (string, error) {
	if strings.IndexByte(uri, 0) >= 0 {
		return "", newErr(Invalid, uri, "the URI contains a NUL byte")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", &Error{Kind: Invalid, URI: uri, Msg: "not a URI", Err: err}
	}
	if u.Scheme != "file" {
		return "", newErr(Invalid, uri, "only file: URIs name files on this host")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", newErr(Invalid, uri, "file: URIs with host %q are not on this host", u.Host)
	}
	if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "", newErr(Invalid, uri, "the path must be absolute")
	}
	p, ok := fileuri.FromURIPath(u.Path)
	if !ok {
		return "", newErr(Invalid, uri, "the path must be absolute")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", newErr(Invalid, uri, "the path contains a NUL byte")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", newErr(Invalid, uri, `the path contains a ".." segment`)
		}
	}
	return filepath.Clean(p), nil
}

// URIOf returns the file: URI of an absolute path.
func URIOf(p string) string {
	return (&url.URL{Scheme: "file", Path: fileuri.URIPath(p)}).String()
}
