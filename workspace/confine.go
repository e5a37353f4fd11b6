package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/workspace/files"
)

// Working directories are confined to the roots when there are any
// (Options.Roots, ahpd --root): the host creates sessions and chats,
// moves chats and changes working directories only inside them
// (host.DirectoryConfiner), terminals start only inside them, and the
// files clients reach are the roots and their grants, not the working
// directories of sessions made before the roots were set. Without roots
// nothing is confined.

// Confining implements host.DirectoryConfiner.
func (w *Workspace) Confining() bool { return len(w.roots) > 0 }

// ConfineDirectory implements host.DirectoryConfiner: dir, a file: URI,
// must be one of the roots or inside one once its symbolic links are
// resolved.
func (w *Workspace) ConfineDirectory(dir string) error {
	if !w.Confining() {
		return nil
	}
	p, err := files.PathOf(dir)
	if err != nil {
		return fmt.Errorf("%q is not a directory of this host: working directories must be inside %s", dir, w.rootList())
	}
	return w.confinePath(p)
}

// confinePath checks an absolute path against the roots, after resolving
// its symbolic links.
func (w *Workspace) confinePath(p string) error {
	if !w.Confining() {
		return nil
	}
	real, err := resolveExisting(filepath.Clean(p))
	if err != nil {
		return fmt.Errorf("%s: %w; working directories must be inside %s", p, err, w.rootList())
	}
	for _, r := range w.realRoots {
		if within(r, real) {
			return nil
		}
	}
	if real != filepath.Clean(p) {
		return fmt.Errorf("%s (%s once its links are resolved) is outside the roots: working directories must be inside %s", p, real, w.rootList())
	}
	return fmt.Errorf("%s is outside the roots: working directories must be inside %s", p, w.rootList())
}

func (w *Workspace) rootList() string {
	if len(w.roots) == 1 {
		return w.roots[0]
	}
	return strings.Join(w.roots[:len(w.roots)-1], ", ") + " or " + w.roots[len(w.roots)-1]
}

// within reports whether p is root or under it (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveExisting resolves the symbolic links of p's longest existing
// prefix and appends the rest: a directory yet to be made is judged by
// where it would be.
func resolveExisting(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	rp, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(p); err == nil {
		// A dangling link: it points at nothing yet, so it could be
		// made to point anywhere.
		return "", errors.New("a symbolic link to nothing")
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}

// realRootsOf resolves the roots' symbolic links; a root that cannot be
// resolved is kept as given.
func realRootsOf(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		out = append(out, filepath.Clean(r))
	}
	return out
}
