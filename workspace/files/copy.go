package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ahp-go/ahp/internal/fileinfo"
)

// Copy copies a file, a symbolic link or a directory tree. An existing
// destination is replaced unless failIfExists; the copy is made under a
// temporary name beside the destination and renamed into place, so a
// failed copy leaves the destination as it was.
func (s *Service) Copy(ctx context.Context, scope Scope, src, dst string, failIfExists bool) error {
	from, to, err := s.openPair(scope, src, dst, Read)
	if err != nil {
		return err
	}
	defer from.close()
	defer to.close()
	if to.rel == "." {
		return newErr(Denied, dst, "an allowed directory itself cannot be replaced")
	}
	if within(from.abs, to.abs) {
		return newErr(Invalid, dst, "cannot copy a directory into itself")
	}
	if _, err := from.root.Lstat(from.rel); err != nil {
		return osErr(src, "copying", err)
	}
	exists := false
	if fi, err := to.root.Lstat(to.rel); err == nil {
		if err := single(dst, fi); err != nil {
			return err
		}
		if failIfExists {
			return newErr(AlreadyExists, dst, "the destination exists")
		}
		exists = true
	}
	tmp := filepath.Join(filepath.Dir(to.rel), "."+filepath.Base(to.rel)+".ahp-"+randomSuffix())
	if err := copyTree(ctx, from, from.rel, to, tmp); err != nil {
		to.root.RemoveAll(tmp)
		return err
	}
	if exists {
		if fi, err := to.root.Lstat(to.rel); err == nil && fi.IsDir() {
			if err := to.root.RemoveAll(to.rel); err != nil {
				to.root.RemoveAll(tmp)
				return osErr(dst, "replacing", err)
			}
		}
	}
	if err := to.root.Rename(tmp, to.rel); err != nil {
		to.root.RemoveAll(tmp)
		return osErr(dst, "copying", err)
	}
	return nil
}

// Move moves (renames) a file or directory. An existing destination is
// replaced unless failIfExists. Within one root it is a rename; across
// roots a copy followed by a delete.
func (s *Service) Move(ctx context.Context, scope Scope, src, dst string, failIfExists bool) error {
	from, to, err := s.openPair(scope, src, dst, Write)
	if err != nil {
		return err
	}
	defer from.close()
	defer to.close()
	if from.rel == "." || to.rel == "." {
		return newErr(Denied, src, "an allowed directory itself cannot be moved or replaced")
	}
	if within(from.abs, to.abs) && from.abs != to.abs {
		return newErr(Invalid, dst, "cannot move a directory into itself")
	}
	sfi, err := from.root.Lstat(from.rel)
	if err != nil {
		return osErr(src, "moving", err)
	}
	if err := single(src, sfi); err != nil {
		return err
	}
	if fi, err := to.root.Lstat(to.rel); err == nil {
		if err := single(dst, fi); err != nil {
			return err
		}
		if failIfExists {
			return newErr(AlreadyExists, dst, "the destination exists")
		}
		// rename(2) replaces a file with a file; anything else is replaced
		// by removing it first.
		if (fi.IsDir() || sfi.IsDir()) && from.abs != to.abs {
			if err := to.root.RemoveAll(to.rel); err != nil {
				return osErr(dst, "replacing", err)
			}
		}
	}
	if from.dir == to.dir {
		if err := from.root.Rename(from.rel, to.rel); err != nil {
			return osErr(src, "moving", err)
		}
		return nil
	}
	if err := s.Copy(ctx, scope, src, dst, failIfExists); err != nil {
		return err
	}
	if err := from.root.RemoveAll(from.rel); err != nil {
		return osErr(src, "removing the moved source", err)
	}
	return nil
}

// openPair resolves a source (with access srcNeed) and a destination
// (with write access).
func (s *Service) openPair(scope Scope, src, dst string, srcNeed Access) (*target, *target, error) {
	from, err := s.open(scope, src, srcNeed)
	if err != nil {
		return nil, nil, err
	}
	to, err := s.open(scope, dst, Write)
	if err != nil {
		from.close()
		return nil, nil, err
	}
	return from, to, nil
}

// copyTree copies from's rel to to's dstRel, recursively; symbolic links
// are copied as links.
func copyTree(ctx context.Context, from *target, rel string, to *target, dstRel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := from.root.Lstat(rel)
	if err != nil {
		return osErr(from.uri, "copying", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		link, err := from.root.Readlink(rel)
		if err != nil {
			return osErr(from.uri, "copying", err)
		}
		if err := to.root.Symlink(link, dstRel); err != nil {
			return osErr(to.uri, "copying", err)
		}
		return nil
	case fi.IsDir():
		if err := to.root.Mkdir(dstRel, fi.Mode().Perm()|0o700); err != nil {
			return osErr(to.uri, "copying", err)
		}
		d, err := openDir(from.root, rel)
		if err != nil {
			return osErr(from.uri, "copying", err)
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return osErr(from.uri, "copying", err)
		}
		for _, n := range names {
			if err := copyTree(ctx, from, filepath.Join(rel, n), to, filepath.Join(dstRel, n)); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode().IsRegular():
		in, _, err := openRegular(&target{uri: from.uri, root: from.root, rel: rel}, openRead, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := to.root.OpenFile(dstRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return osErr(to.uri, "copying", err)
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return osErr(to.uri, "copying", err)
		}
		if err := out.Close(); err != nil {
			return osErr(to.uri, "copying", err)
		}
		return nil
	}
	return newErr(WrongType, from.uri, "cannot copy %s", fileinfo.Kind(fi.Mode()))
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
