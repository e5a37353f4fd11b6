package completion

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestOffsets(t *testing.T) {
	tests := []struct {
		text     string
		off16    int
		wantByte int
		ok       bool
	}{
		{"abc", 0, 0, true},
		{"abc", 3, 3, true},
		{"abc", 4, 0, false},
		{"abc", -1, 0, false},
		{"日本 @x", 3, 7, true}, // CJK: one unit, three bytes each
		{"😀 @a", 2, 4, true},  // an emoji is two units, four bytes
		{"😀 @a", 1, 0, false}, // inside its surrogate pair
		{"😀 @a", 5, 7, true},  // the end
		{"é😀日", 4, 9, true},   // two-byte, four-byte, three-byte runes
		{"é😀日", 3, 6, true},
	}
	for _, tt := range tests {
		got, ok := ByteOffset(tt.text, tt.off16)
		if got != tt.wantByte || ok != tt.ok {
			t.Errorf("ByteOffset(%q, %d) = %d, %v, want %d, %v", tt.text, tt.off16, got, ok, tt.wantByte, tt.ok)
		}
	}
	for s, n := range map[string]int{"": 0, "abc": 3, "😀": 2, "日本": 2, "a😀b👍🏽": 8} {
		if got := UTF16Len(s); got != n {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, n)
		}
	}
}

func TestWordAt(t *testing.T) {
	tests := []struct {
		text    string
		cur     int // byte offset
		want    string
		start   int
		end     int
		isFirst bool
	}{
		{"@ma", 3, "@ma", 0, 3, true},
		{"look at @ma", 11, "@ma", 8, 11, false},
		{"look at @main.go now", 11, "@ma", 8, 16, false},
		{"  /he", 5, "/he", 2, 5, true},
		{"日本 @x", 9, "@x", 7, 9, false},
		{"fix 😀@a", 10, "😀@a", 4, 10, false},
		{"a\n@b", 4, "@b", 2, 4, false},
		{"", 0, "", 0, 0, true},
	}
	for _, tt := range tests {
		w := WordAt(tt.text, tt.cur)
		if w.Text != tt.want || w.Start != tt.start || w.End != tt.end || w.First != tt.isFirst {
			t.Errorf("WordAt(%q, %d) = %+v, want %q [%d,%d) first=%v", tt.text, tt.cur, w, tt.want, tt.start, tt.end, tt.isFirst)
		}
	}
	line, char := Position("ab\n😀 x", 9)
	if line != 1 || char != 4 {
		t.Errorf("Position = %d:%d, want 1:4", line, char)
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		query, better, worse string
	}{
		{"main", "cmd/main.go", "cmd/domain_info.go"},
		{"mg", "main.go", "some/long/path/magic.go"},
		{"rd", "README.md", "docs/rfc/index.md"},
		{"日本", "docs/日本.md", "docs/日/x/本.md"},
	}
	for _, tt := range tests {
		b, ok1 := Score(tt.query, tt.better)
		w, ok2 := Score(tt.query, tt.worse)
		if !ok1 || !ok2 || b <= w {
			t.Errorf("Score(%q): %s %d %v, %s %d %v", tt.query, tt.better, b, ok1, tt.worse, w, ok2)
		}
	}
	if _, ok := Score("xyz", "main.go"); ok {
		t.Error("xyz matched main.go")
	}
	if _, ok := Score("MAIN", "cmd/main.go"); !ok {
		t.Error("matching is not case-insensitive")
	}
}

func write(t testing.TB, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rels(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Rel)
	}
	return out
}

func TestFindGit(t *testing.T) {
	root := t.TempDir()
	write(t, root, "main.go", "cmd/tool/main.go", "build/out.bin", ".gitignore", "notes/todo.md")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, root, "debug.log")
	git := exec.Command("git", "init", "-q", root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	// An untracked file not ignored is offered too: nothing is added.
	got := rels(Find(t.Context(), []string{root}, "", 100))
	for _, want := range []string{"main.go", "cmd", "cmd/tool", "cmd/tool/main.go", "notes/todo.md", ".gitignore"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not offered: %v", want, got)
		}
	}
	for _, ignored := range []string{"build", "build/out.bin", "debug.log"} {
		if slices.Contains(got, ignored) {
			t.Errorf("git-ignored %s offered: %v", ignored, got)
		}
	}
	if got := rels(Find(t.Context(), []string{root}, "main", 100)); len(got) != 2 || got[0] != "main.go" {
		t.Errorf("main: %v", got)
	}
	// A subdirectory of the work tree lists what is below it.
	if got := rels(Find(t.Context(), []string{filepath.Join(root, "cmd")}, "", 100)); !slices.Equal(got, []string{"tool", "tool/main.go"}) {
		t.Errorf("below cmd: %v", got)
	}
}

func TestFindWalk(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "src/b.go", ".git/config", ".cache/c", "node_modules/x/index.js", ".env")
	got := rels(Find(t.Context(), []string{root}, "", 100))
	if !slices.Equal(got, []string{"a.txt", "src", "src/b.go"}) {
		t.Errorf("walk: %v", got)
	}
}

func TestBounds(t *testing.T) {
	root := t.TempDir()
	var files []string
	for i := range 300 {
		files = append(files, filepath.Join("d", string(rune('a'+i%26)), string(rune('a'+i/26))+".txt"))
	}
	write(t, root, files...)
	if got := Find(t.Context(), []string{root}, "", 50); len(got) != 50 {
		t.Errorf("%d matches, want the limit 50", len(got))
	}
	entries, err := List(t.Context(), root, 10)
	if err != nil || len(entries) != 10 {
		t.Errorf("List with max 10: %d, %v", len(entries), err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got := Find(ctx, []string{root}, "", 50); len(got) != 0 {
		t.Errorf("a done context still found %d", len(got))
	}
}

// TestGitOnlyInWorkTrees: git is started only for a folder in a git work
// tree (or what looks like one: a ".git" in it or above it); any other
// folder is walked without starting a process.
func TestGitOnlyInWorkTrees(t *testing.T) {
	// A git on PATH that records each start and fails, as git does
	// outside a repository.
	bin, starts := t.TempDir(), filepath.Join(t.TempDir(), "starts")
	script := "#!/bin/sh\necho started >> '" + starts + "'\nexit 128\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("GIT_DIR", "")

	repo, linked := t.TempDir(), t.TempDir()
	write(t, repo, ".git/HEAD", "src/a.go")
	write(t, linked, "b.go")
	if err := os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	write(t, plain, "c.go")
	tests := []struct {
		name string
		root string
		git  bool
		want []string
	}{
		{"a folder outside any work tree", plain, false, []string{"c.go"}},
		{"a work tree", repo, true, []string{"src", "src/a.go"}},
		{"a folder inside a work tree", filepath.Join(repo, "src"), true, []string{"a.go"}},
		{"a linked work tree (.git is a file)", linked, true, []string{"b.go"}},
	}
	for _, tt := range tests {
		os.Remove(starts)
		entries, err := List(t.Context(), tt.root, 100)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Rel)
		}
		// The fake git fails, so every folder ends up walked.
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: listed %v, want %v", tt.name, got, tt.want)
		}
		_, err = os.Stat(starts)
		if started := err == nil; started != tt.git {
			t.Errorf("%s: git started %v, want %v", tt.name, started, tt.git)
		}
	}
}
