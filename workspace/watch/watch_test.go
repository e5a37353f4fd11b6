package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type sink struct {
	mu      sync.Mutex
	batches [][]Change
	wake    chan struct{}
}

func newSink() *sink { return &sink{wake: make(chan struct{}, 1)} }

func (s *sink) deliver(b []Change) {
	s.mu.Lock()
	s.batches = append(s.batches, append([]Change(nil), b...))
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// seen returns "type rel" for every change so far.
func (s *sink) seen(root string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.batches {
		if len(b) == 0 {
			panic("empty batch")
		}
		for _, c := range b {
			r, _ := filepath.Rel(root, c.Path)
			out = append(out, c.Type.String()+" "+filepath.ToSlash(r))
		}
	}
	return out
}

func (s *sink) waitFor(t *testing.T, root string, want ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got := s.seen(root)
		if containsAll(got, want) {
			return
		}
		select {
		case <-s.wake:
		case <-deadline:
			t.Fatalf("got %v, want %v among them", got, want)
		}
	}
}

func containsAll(got, want []string) bool {
	set := map[string]bool{}
	for _, g := range got {
		set[g] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRecursiveWithFilters(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "src", "old.go"), "x")
	write(t, filepath.Join(root, "node_modules", "m", "i.js"), "x")
	s := newSink()
	w, err := Start(Options{Root: root, Recursive: true, Excludes: []string{"node_modules", "**/*.tmp"}, Batch: 20 * time.Millisecond}, s.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, filepath.Join(root, "src", "old.go"), "changed")
	write(t, filepath.Join(root, "src", "deep", "new.go"), "x") // a new directory, added on the fly
	write(t, filepath.Join(root, "src", "x.tmp"), "x")
	write(t, filepath.Join(root, "node_modules", "m", "j.js"), "x")
	os.Remove(filepath.Join(root, "src", "old.go"))
	s.waitFor(t, root, "added src/deep", "deleted src/old.go")
	// The new directory's file shows up, whether its own event or the scan
	// of the new directory saw it first.
	s.waitFor(t, root, "added src/deep/new.go")
	for _, g := range s.seen(root) {
		if strings.Contains(g, "node_modules") || strings.HasSuffix(g, ".tmp") {
			t.Fatalf("excluded change reported: %s", g)
		}
	}
}

func TestIncludesAndNonRecursive(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "sub", "a.md"), "x")
	s := newSink()
	w, err := Start(Options{Root: root, Includes: []string{"*.go"}, Batch: 10 * time.Millisecond}, s.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, filepath.Join(root, "a.go"), "x")
	write(t, filepath.Join(root, "a.md"), "x")
	write(t, filepath.Join(root, "sub", "b.go"), "x") // not direct: not reported
	write(t, filepath.Join(root, "z.go"), "x")
	s.waitFor(t, root, "added a.go", "added z.go")
	for _, g := range s.seen(root) {
		if strings.HasSuffix(g, ".md") || strings.Contains(g, "sub/") {
			t.Fatalf("unwanted change %s", g)
		}
	}
}

func TestSingleFile(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "f.txt")
	write(t, f, "x")
	s := newSink()
	w, err := Start(Options{Root: f, Batch: 10 * time.Millisecond}, s.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, filepath.Join(root, "other"), "x")
	write(t, f, "y")
	s.waitFor(t, f, "updated .")
	for _, g := range s.seen(f) {
		if g != "updated ." {
			t.Fatalf("unwanted change %s", g)
		}
	}
}

// TestBatchesAreBoundedAndCoalesced: real files, each written twice, come
// as one "added" each, in batches of at most MaxBatch where a path appears
// once. Batches are cut by a ticker, which may fall between a file's two
// writes (the busier the machine, the likelier): the "updated" of the
// second write then comes in a later batch. How changes fold within a
// batch is TestCoalescing's.
func TestBatchesAreBoundedAndCoalesced(t *testing.T) {
	root := t.TempDir()
	s := newSink()
	w, err := Start(Options{Root: root, Batch: 200 * time.Millisecond, MaxBatch: 10}, s.deliver)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 25 {
		p := filepath.Join(root, fmt.Sprintf("f%02d", i))
		write(t, p, "a")
		write(t, p, "b") // added then updated: "added", then at most an "updated"
	}
	var want []string
	for i := range 25 {
		want = append(want, fmt.Sprintf("added f%02d", i))
	}
	s.waitFor(t, root, want...)
	s.mu.Lock()
	defer s.mu.Unlock()
	first := map[string]int{} // path -> the batch of its first change
	for i, b := range s.batches {
		if len(b) > 10 {
			t.Fatalf("a batch of %d, over MaxBatch", len(b))
		}
		inBatch := map[string]bool{}
		for _, c := range b {
			name := filepath.Base(c.Path)
			if inBatch[name] {
				t.Errorf("batch %d has %s twice: %v", i, name, b)
			}
			inBatch[name] = true
			if _, seen := first[name]; !seen {
				first[name] = i
				if c.Type != Added {
					t.Errorf("%s first came as %s, want added", name, c.Type)
				}
			} else if c.Type != Updated {
				t.Errorf("%s came again as %s in batch %d, want updated", name, c.Type, i)
			}
		}
	}
	if len(first) != 25 {
		t.Errorf("%d files seen, want 25", len(first))
	}
}

// TestCoalescing: the changes to a path pending in one batch fold into
// one; a flush delivers the pending paths in the order they first
// changed, cut into batches of at most MaxBatch.
func TestCoalescing(t *testing.T) {
	tests := []struct {
		name    string
		changes []ChangeType
		want    ChangeType // none when the path is gone from the batch
	}{
		{"added then updated", []ChangeType{Added, Updated}, Added},
		{"added, updated twice", []ChangeType{Added, Updated, Updated}, Added},
		{"added then deleted", []ChangeType{Added, Deleted}, Deleted},
		{"deleted then added", []ChangeType{Deleted, Added}, Updated},
		{"updated then deleted", []ChangeType{Updated, Deleted}, Deleted},
		{"updated twice", []ChangeType{Updated, Updated}, Updated},
	}
	root := t.TempDir()
	for _, tt := range tests {
		s := newSink()
		w := &Watch{opts: Options{Root: root, MaxBatch: 10}, deliver: s.deliver, pending: map[string]ChangeType{}}
		for _, c := range tt.changes {
			w.note(filepath.Join(root, "f"), c)
		}
		w.flush()
		if got := s.seen(root); len(got) != 1 || got[0] != tt.want.String()+" f" {
			t.Errorf("%s: %v, want [%s f]", tt.name, got, tt.want)
		}
	}

	s := newSink()
	w := &Watch{opts: Options{Root: root, MaxBatch: 10}, deliver: s.deliver, pending: map[string]ChangeType{}}
	var want []string
	for i := range 25 {
		p := filepath.Join(root, fmt.Sprintf("f%02d", i))
		w.note(p, Added)
		w.note(p, Updated)
		want = append(want, fmt.Sprintf("added f%02d", i))
	}
	w.flush()
	var sizes []int
	for _, b := range s.batches {
		sizes = append(sizes, len(b))
	}
	if got := s.seen(root); !slices.Equal(got, want) || !slices.Equal(sizes, []int{10, 10, 5}) {
		t.Errorf("25 files added then updated: %v in batches of %v, want one added each in batches of [10 10 5]", got, sizes)
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, rel string
		want     bool
	}{
		{"node_modules", "node_modules/a/b.js", true},
		{"**/*.tmp", "a/b/c.tmp", true},
		{"**/*.tmp", "c.tmp", true},
		{"*.go", "a.go", true},
		{"*.go", "sub/a.go", false},
		{"src/**", "src/a/b", true},
		{"src", "srcx/a", false},
	} {
		if got := excluded([]string{tc.pat}, tc.rel); got != tc.want {
			t.Errorf("%q on %q: %v", tc.pat, tc.rel, got)
		}
	}
	if _, err := Start(Options{Root: t.TempDir(), Excludes: []string{"[bad"}}, func([]Change) {}); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

// BenchmarkStart50k starts a recursive watch on a tree of 50,000 files in
// 500 directories. The baseline, in the same run, is walking the tree
// without watching.
func BenchmarkStart50k(b *testing.B) {
	root := b.TempDir()
	for d := range 500 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d/25), fmt.Sprintf("e%03d", d))
		os.MkdirAll(dir, 0o755)
		for f := range 100 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), nil, 0o644)
		}
	}
	b.Run("baseline=walk", func(b *testing.B) {
		for b.Loop() {
			n := 0
			filepath.WalkDir(root, func(string, os.DirEntry, error) error { n++; return nil })
		}
	})
	b.Run("watch", func(b *testing.B) {
		for b.Loop() {
			w, err := Start(Options{Root: root, Recursive: true}, func([]Change) {})
			if err != nil {
				b.Fatal(err)
			}
			w.Close()
		}
	})
}

// The OS limit cannot be lowered for one test without changing the whole
// machine's; this checks that inotify's answer to it becomes ErrLimit.
func TestLimitError(t *testing.T) {
	for _, e := range []error{syscall.ENOSPC, syscall.EMFILE} {
		if err := limitErr(fmt.Errorf("add: %w", e)); !errors.Is(err, ErrLimit) {
			t.Errorf("%v: %v", e, err)
		}
	}
	if err := limitErr(os.ErrNotExist); errors.Is(err, ErrLimit) {
		t.Error("a missing path is not the limit")
	}
}
