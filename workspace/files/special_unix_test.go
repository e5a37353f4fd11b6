//go:build unix

package files

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestSpecialFilesRefused(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	fifo := filepath.Join(f.dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	// A FIFO with no writer would block a plain open forever.
	_, err := f.svc.Read(ctx, f.scope, f.uri("fifo"), Range{})
	wantKind(t, err, WrongType)
	wantKind(t, f.svc.Write(ctx, f.scope, f.uri("fifo"), WriteRequest{Data: []byte("x")}), WrongType)

	dev := filepath.Join(f.dir, "null")
	if err := mknodNull(dev); err != nil {
		t.Logf("no device node (%v); checking a link to /dev/zero instead", err)
		must(t, os.Symlink("/dev/zero", dev))
		_, err := f.svc.Read(ctx, f.scope, f.uri("null"), Range{})
		wantKind(t, err, Denied)
		return
	}
	_, err = f.svc.Read(ctx, f.scope, f.uri("null"), Range{})
	wantKind(t, err, WrongType)
	wantKind(t, f.svc.Write(ctx, f.scope, f.uri("null"), WriteRequest{Data: []byte("x")}), WrongType)
	_, err = f.svc.Read(ctx, f.scope, f.uri(""), Range{})
	wantKind(t, err, WrongType) // a directory
}
