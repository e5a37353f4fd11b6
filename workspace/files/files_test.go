package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture is a session directory with a secret next to it.
type fixture struct {
	svc    *Service
	dir    string // the allowed directory
	other  string // another session's directory, not in scope
	secret string // a file outside every scope
	scope  Scope
}

func newFixture(t *testing.T, opts *Options) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{
		svc:    New(opts),
		dir:    filepath.Join(base, "session-a"),
		other:  filepath.Join(base, "session-b"),
		secret: filepath.Join(base, "secret.txt"),
	}
	for _, d := range []string{f.dir, f.other} {
		must(t, os.Mkdir(d, 0o755))
	}
	must(t, os.WriteFile(f.secret, []byte("top secret"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.other, "b.txt"), []byte("b's file"), 0o644))
	f.scope = Scope{{Dir: f.dir, Access: ReadWrite}}
	return f
}

func (f *fixture) uri(rel string) string { return URIOf(filepath.Join(f.dir, rel)) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantKind(t *testing.T, err error, k Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", k)
	}
	if got := KindOf(err); got != k {
		t.Fatalf("got %v (%v), want %v", got, err, k)
	}
}

func TestReadWriteRoundTrip(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	must(t, f.svc.Write(ctx, f.scope, f.uri("a.txt"), WriteRequest{Data: []byte("hello")}))
	c, err := f.svc.Read(ctx, f.scope, f.uri("a.txt"), Range{})
	must(t, err)
	if string(c.Data) != "hello" || !c.EOF || c.Size != 5 || c.ContentType != "text/plain; charset=utf-8" {
		t.Fatalf("read %+v", c)
	}
}

func TestWriteModes(t *testing.T) {
	tests := []struct {
		name    string
		initial string
		w       WriteRequest
		want    string
		kind    Kind
	}{
		{"truncate all", "abcdef", WriteRequest{Data: []byte("XY")}, "XY", 0},
		{"truncate at position", "abcdef", WriteRequest{Data: []byte("XY"), Position: 2}, "abXY", 0},
		{"truncate past the end", "abc", WriteRequest{Data: []byte("X"), Position: 9}, "", Invalid},
		{"append at EOF", "abc", WriteRequest{Data: []byte("XY"), Mode: Append}, "abcXY", 0},
		{"append before EOF", "abcdef", WriteRequest{Data: []byte("XY"), Mode: Append, Position: 2}, "abcdXYef", 0},
		{"append before the start", "abc", WriteRequest{Data: []byte("X"), Mode: Append, Position: 4}, "", Invalid},
		{"insert at start", "abc", WriteRequest{Data: []byte("XY"), Mode: Insert}, "XYabc", 0},
		{"insert in the middle", "abc", WriteRequest{Data: []byte("XY"), Mode: Insert, Position: 1}, "aXYbc", 0},
		{"insert at the end", "abc", WriteRequest{Data: []byte("XY"), Mode: Insert, Position: 3}, "abcXY", 0},
		{"create only on an existing file", "abc", WriteRequest{Data: []byte("X"), CreateOnly: true}, "", AlreadyExists},
		{"negative position", "abc", WriteRequest{Data: []byte("X"), Position: -1}, "", Invalid},
		{"stale etag", "abc", WriteRequest{Data: []byte("X"), IfMatch: "0-0-0"}, "", Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			p := filepath.Join(f.dir, "f")
			must(t, os.WriteFile(p, []byte(tt.initial), 0o644))
			err := f.svc.Write(t.Context(), f.scope, f.uri("f"), tt.w)
			got, _ := os.ReadFile(p)
			if tt.kind != 0 {
				wantKind(t, err, tt.kind)
				if string(got) != tt.initial {
					t.Fatalf("a refused write changed the file to %q", got)
				}
				return
			}
			must(t, err)
			if string(got) != tt.want {
				t.Fatalf("file is %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteIfMatch(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	must(t, f.svc.Write(ctx, f.scope, f.uri("f"), WriteRequest{Data: []byte("one")}))
	info, err := f.svc.Resolve(ctx, f.scope, f.uri("f"), true)
	must(t, err)
	must(t, f.svc.Write(ctx, f.scope, f.uri("f"), WriteRequest{Data: []byte("two"), IfMatch: info.ETag}))
	// The etag read before the second write no longer matches.
	wantKind(t, f.svc.Write(ctx, f.scope, f.uri("f"), WriteRequest{Data: []byte("three!"), IfMatch: info.ETag}), Conflict)
	wantKind(t, f.svc.Write(ctx, f.scope, f.uri("missing"), WriteRequest{Data: []byte("x"), IfMatch: info.ETag}), NotFound)
}

// ResourceWriteMode: concurrent appends must not clobber each other.
func TestConcurrentAppendsAreAtomic(t *testing.T) {
	f := newFixture(t, nil)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Sprintf("writer %d line %03d %s\n", w, i, strings.Repeat("x", 100))
				if err := f.svc.Write(t.Context(), f.scope, f.uri("log"), WriteRequest{Data: []byte(line), Mode: Append}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(f.dir, "log"))
	must(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "writer ") || !strings.HasSuffix(l, strings.Repeat("x", 100)) || seen[l] {
			t.Fatalf("clobbered or repeated line %q", l)
		}
		seen[l] = true
	}
}

func TestRangedReads(t *testing.T) {
	f := newFixture(t, &Options{MaxReadBytes: 10})
	ctx := t.Context()
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz") // 36 bytes, over the limit
	must(t, os.WriteFile(filepath.Join(f.dir, "big.bin"), data, 0o644))

	_, err := f.svc.Read(ctx, f.scope, f.uri("big.bin"), Range{})
	wantKind(t, err, TooLarge)

	var got []byte
	for off := int64(0); ; {
		c, err := f.svc.Read(ctx, f.scope, f.uri("big.bin"), Range{Set: true, Offset: off, Length: 100})
		must(t, err)
		if len(c.Data) > 10 {
			t.Fatalf("a page of %d bytes, over the 10-byte limit", len(c.Data))
		}
		got = append(got, c.Data...)
		off += int64(len(c.Data))
		if c.EOF {
			break
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("pages joined to %q", got)
	}
	c, err := f.svc.Read(ctx, f.scope, f.uri("big.bin"), Range{Set: true, Offset: 100, Length: 5})
	must(t, err)
	if len(c.Data) != 0 || !c.EOF {
		t.Fatalf("read past the end: %+v", c)
	}
	_, err = f.svc.Read(ctx, f.scope, f.uri("big.bin"), Range{Set: true, Offset: -1})
	wantKind(t, err, Invalid)
}

// The security cases of issue 11: everything outside the scope is refused,
// whatever the path says.
func TestConfinement(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	rel, _ := filepath.Rel(f.dir, f.secret)
	must(t, os.Symlink(rel, filepath.Join(f.dir, "escape")))                 // ../secret.txt
	must(t, os.Symlink(f.secret, filepath.Join(f.dir, "absolute")))          // /…/secret.txt
	must(t, os.Symlink("../session-b", filepath.Join(f.dir, "to-b")))        // another session
	must(t, os.Symlink(filepath.Dir(f.dir), filepath.Join(f.dir, "parent"))) // a directory out
	must(t, os.WriteFile(filepath.Join(f.dir, "inside.txt"), []byte("ok"), 0o644))
	must(t, os.Symlink("inside.txt", filepath.Join(f.dir, "fine"))) // stays inside
	cases := []struct {
		name string
		uri  string
		kind Kind
	}{
		{"dot-dot traversal", f.uri("") + "/../secret.txt", Invalid},
		{"encoded dot-dot", f.uri("") + "/%2e%2e/secret.txt", Invalid},
		{"a plain path outside", URIOf(f.secret), Denied},
		{"another session's directory", URIOf(filepath.Join(f.other, "b.txt")), Denied},
		{"relative symlink out", f.uri("escape"), Denied},
		{"absolute symlink out", f.uri("absolute"), Denied},
		{"symlink into another session", f.uri("to-b/b.txt"), Denied},
		{"through a directory symlink", f.uri("parent/secret.txt"), Denied},
		{"NUL in the path", f.uri("inside.txt") + "%00.png", Invalid},
		{"raw NUL", f.uri("inside.txt") + "\x00", Invalid},
		{"not a file URI", "http://example.com/x", Invalid},
		{"a remote host", "file://elsewhere/etc/passwd", Invalid},
		{"relative", "file:inside.txt", Invalid},
		{"prefix that is not a parent", URIOf(f.dir + "-evil/x"), Denied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := f.svc.Read(ctx, f.scope, tc.uri, Range{})
			if err == nil && bytes.Contains(c.Data, []byte("secret")) {
				t.Fatal("read the secret")
			}
			wantKind(t, err, tc.kind)
			wantKind(t, f.svc.Write(ctx, f.scope, tc.uri, WriteRequest{Data: []byte("pwned")}), tc.kind)
			_, err = f.svc.Resolve(ctx, f.scope, tc.uri, true)
			wantKind(t, err, tc.kind)
		})
	}
	if got, _ := os.ReadFile(f.secret); string(got) != "top secret" {
		t.Fatalf("the secret was overwritten: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(f.other, "b.txt")); string(got) != "b's file" {
		t.Fatalf("the other session's file was overwritten: %q", got)
	}
	c, err := f.svc.Read(ctx, f.scope, f.uri("fine"), Range{})
	must(t, err)
	if string(c.Data) != "ok" {
		t.Fatalf("an inward symlink read %q", c.Data)
	}
	// The other session's own scope reaches its directory.
	other := Scope{{Dir: f.other, Access: ReadWrite}}
	_, err = f.svc.Read(ctx, other, URIOf(filepath.Join(f.other, "b.txt")), Range{})
	must(t, err)
	_, err = f.svc.Read(ctx, other, f.uri("inside.txt"), Range{})
	wantKind(t, err, Denied)
}

// A symbolic link that flips between a file inside and one outside while
// reads run: os.Root resolves each open in one walk, so no read ever
// returns the outside file.
func TestSymlinkSwappedBetweenCheckAndUse(t *testing.T) {
	f := newFixture(t, nil)
	must(t, os.WriteFile(filepath.Join(f.dir, "inside.txt"), []byte("inside"), 0o644))
	link := filepath.Join(f.dir, "flip")
	must(t, os.Symlink("inside.txt", link))
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		tmp := link + ".tmp"
		for i := 0; ctx.Err() == nil; i++ {
			target := "inside.txt"
			if i%2 == 1 {
				target = "../secret.txt"
			}
			os.Remove(tmp)
			if err := os.Symlink(target, tmp); err == nil {
				os.Rename(tmp, link)
			}
		}
	})
	var inside, refused int
	for range 2000 {
		c, err := f.svc.Read(ctx, f.scope, f.uri("flip"), Range{})
		if err == nil {
			if string(c.Data) != "inside" {
				t.Fatalf("read %q through a swapped link", c.Data)
			}
			inside++
			continue
		}
		if k := KindOf(err); k != Denied && k != NotFound {
			t.Fatalf("unexpected error %v", err)
		}
		refused++
	}
	cancel()
	wg.Wait()
	t.Logf("%d reads inside, %d refused", inside, refused)
	if got, _ := os.ReadFile(f.secret); string(got) != "top secret" {
		t.Fatal("secret changed")
	}
}

func TestListMkdirDelete(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	must(t, f.svc.Mkdir(ctx, f.scope, f.uri("a/b/c")))
	must(t, f.svc.Mkdir(ctx, f.scope, f.uri("a/b/c"))) // exists: no-op
	must(t, f.svc.Write(ctx, f.scope, f.uri("a/file"), WriteRequest{Data: []byte("x")}))
	must(t, os.Symlink("b", filepath.Join(f.dir, "a", "link-to-dir")))
	must(t, os.Symlink("../../secret.txt", filepath.Join(f.dir, "a", "link-out")))
	wantKind(t, f.svc.Mkdir(ctx, f.scope, f.uri("a/file")), AlreadyExists)
	wantKind(t, f.svc.Mkdir(ctx, f.scope, f.uri("a/file/sub")), AlreadyExists)

	entries, err := f.svc.List(ctx, f.scope, f.uri("a"))
	must(t, err)
	want := []Entry{{"b", true}, {"file", false}, {"link-out", false}, {"link-to-dir", true}}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Fatalf("list %v, want %v", entries, want)
	}
	_, err = f.svc.List(ctx, f.scope, f.uri("a/file"))
	wantKind(t, err, WrongType)
	_, err = f.svc.List(ctx, f.scope, f.uri("nope"))
	wantKind(t, err, NotFound)

	wantKind(t, f.svc.Delete(ctx, f.scope, f.uri("a"), false), WrongType)
	wantKind(t, f.svc.Delete(ctx, f.scope, f.uri(""), true), Denied)
	wantKind(t, f.svc.Delete(ctx, f.scope, f.uri("missing"), true), NotFound)
	must(t, f.svc.Delete(ctx, f.scope, f.uri("a/link-out"), false))
	must(t, f.svc.Delete(ctx, f.scope, f.uri("a"), true))
	if _, err := os.Stat(f.secret); err != nil {
		t.Fatal("deleting a link removed its target")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a still exists")
	}
}

func TestListLimit(t *testing.T) {
	f := newFixture(t, &Options{MaxListEntries: 3})
	for i := range 4 {
		must(t, os.WriteFile(filepath.Join(f.dir, fmt.Sprint(i)), nil, 0o644))
	}
	_, err := f.svc.List(t.Context(), f.scope, f.uri(""))
	wantKind(t, err, TooLarge)
}

func TestCopyAndMove(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	must(t, os.MkdirAll(filepath.Join(f.dir, "src", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.dir, "src", "sub", "x.txt"), []byte("x"), 0o644))
	must(t, os.Symlink("sub/x.txt", filepath.Join(f.dir, "src", "ln")))

	must(t, f.svc.Copy(ctx, f.scope, f.uri("src"), f.uri("dst"), false))
	if got, _ := os.ReadFile(filepath.Join(f.dir, "dst", "ln")); string(got) != "x" {
		t.Fatalf("copied tree reads %q", got)
	}
	wantKind(t, f.svc.Copy(ctx, f.scope, f.uri("src"), f.uri("dst"), true), AlreadyExists)
	wantKind(t, f.svc.Copy(ctx, f.scope, f.uri("src"), f.uri("src/sub/in"), false), Invalid)
	must(t, f.svc.Write(ctx, f.scope, f.uri("dst/sub/x.txt"), WriteRequest{Data: []byte("changed")}))
	must(t, f.svc.Copy(ctx, f.scope, f.uri("src"), f.uri("dst"), false)) // replaces
	if got, _ := os.ReadFile(filepath.Join(f.dir, "dst", "sub", "x.txt")); string(got) != "x" {
		t.Fatalf("replaced copy reads %q", got)
	}
	// Copying out of scope, or the secret in, is refused.
	wantKind(t, f.svc.Copy(ctx, f.scope, f.uri("src/sub/x.txt"), URIOf(filepath.Join(f.other, "y")), false), Denied)
	wantKind(t, f.svc.Copy(ctx, f.scope, URIOf(f.secret), f.uri("stolen"), false), Denied)

	must(t, f.svc.Move(ctx, f.scope, f.uri("dst/sub/x.txt"), f.uri("moved.txt"), false))
	if got, _ := os.ReadFile(filepath.Join(f.dir, "moved.txt")); string(got) != "x" {
		t.Fatalf("moved file reads %q", got)
	}
	wantKind(t, f.svc.Move(ctx, f.scope, f.uri("src"), f.uri("moved.txt"), true), AlreadyExists)
	must(t, f.svc.Move(ctx, f.scope, f.uri("src"), f.uri("moved.txt"), false))
	if fi, err := os.Stat(filepath.Join(f.dir, "moved.txt")); err != nil || !fi.IsDir() {
		t.Fatal("move did not replace the file with the directory")
	}
	wantKind(t, f.svc.Move(ctx, f.scope, f.uri(""), f.uri("x"), false), Denied)

	// Across two roots: copy then delete.
	two := append(Scope{{Dir: f.other, Access: ReadWrite}}, f.scope...)
	must(t, f.svc.Move(ctx, two, f.uri("moved.txt"), URIOf(filepath.Join(f.other, "m")), false))
	if got, _ := os.ReadFile(filepath.Join(f.other, "m", "sub", "x.txt")); string(got) != "x" {
		t.Fatalf("cross-root move reads %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "moved.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the cross-root move left its source")
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	must(t, os.MkdirAll(filepath.Join(f.dir, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.dir, "d", "x.json"), []byte("{}"), 0o644))
	must(t, os.Symlink("d", filepath.Join(f.dir, "dl")))
	info, err := f.svc.Resolve(ctx, f.scope, f.uri("dl/x.json"), true)
	must(t, err)
	if info.URI != f.uri("d/x.json") || info.Type != "file" || info.Size != 2 || info.ContentType != "application/json" || info.ETag == "" {
		t.Fatalf("resolve %+v", info)
	}
	info, err = f.svc.Resolve(ctx, f.scope, f.uri("dl"), false)
	must(t, err)
	if info.Type != "symlink" || info.URI != f.uri("dl") {
		t.Fatalf("lstat %+v", info)
	}
	info, err = f.svc.Resolve(ctx, f.scope, f.uri("dl"), true)
	must(t, err)
	if info.Type != "directory" || info.URI != f.uri("d") || info.HasSize {
		t.Fatalf("stat %+v", info)
	}
	_, err = f.svc.Resolve(ctx, f.scope, f.uri("nope"), true)
	wantKind(t, err, NotFound)
}

// A directory the operator made requestable is reachable only after
// resourceRequest, and a denial there says which access to ask for.
func TestRequestGrants(t *testing.T) {
	shared := t.TempDir()
	must(t, os.WriteFile(filepath.Join(shared, "doc.md"), []byte("# doc"), 0o644))
	f := newFixture(t, &Options{Requestable: []string{shared}})
	ctx := t.Context()
	doc := URIOf(filepath.Join(shared, "doc.md"))
	_, err := f.svc.Read(ctx, f.scope, doc, Range{})
	wantKind(t, err, Denied)
	var e *Error
	if !errors.As(err, &e) || e.Need != Read {
		t.Fatalf("denial %+v does not ask for read access", err)
	}
	// Outside every requestable directory, no grant would help.
	_, err = f.svc.Read(ctx, f.scope, URIOf(f.secret), Range{})
	if !errors.As(err, &e) || e.Need != 0 {
		t.Fatalf("denial %+v offers a grant", err)
	}
	if _, err := f.svc.Request(f.scope, URIOf(f.secret), Read); KindOf(err) != Denied {
		t.Fatalf("request outside: %v", err)
	}
	grant, err := f.svc.Request(f.scope, doc, Read)
	must(t, err)
	scope := append(f.scope, grant)
	c, err := f.svc.Read(ctx, scope, doc, Range{})
	must(t, err)
	if string(c.Data) != "# doc" {
		t.Fatalf("read %q", c.Data)
	}
	// A read grant does not allow writing.
	err = f.svc.Write(ctx, scope, doc, WriteRequest{Data: []byte("x")})
	if !errors.As(err, &e) || e.Kind != Denied || e.Need != Write {
		t.Fatalf("write under a read grant: %v", err)
	}
	// In scope already: nothing more to grant.
	if g, err := f.svc.Request(f.scope, f.uri("x"), ReadWrite); err != nil || g != (Root{}) {
		t.Fatalf("request in scope: %v %v", g, err)
	}
}
