package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Two opens of one file are two lockers, in one process as in two.
func TestLockExcludesOtherOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"a locks", func() error { return Lock(a) }, nil},
		{"b is kept out", func() error { return TryLock(b) }, ErrLocked},
		{"a unlocks", func() error { return Unlock(a) }, nil},
		{"b locks", func() error { return TryLock(b) }, nil},
		{"a is kept out", func() error { return TryLock(a) }, ErrLocked},
		{"b closes", func() error { return b.Close() }, nil},
		{"a locks after b's close", func() error { return TryLock(a) }, nil},
		{"a unlocks again", func() error { return Unlock(a) }, nil},
	}
	for _, s := range steps {
		if err := s.do(); !errors.Is(err, s.want) || (s.want == nil && err != nil) {
			t.Fatalf("%s: got %v, want %v", s.name, err, s.want)
		}
	}
}

// Lock waits for the holder to let go.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- Lock(b) }()
	select {
	case err := <-got:
		t.Fatalf("Lock returned %v while another open held the lock", err)
	default:
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after the holder let go: %v", err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
}
