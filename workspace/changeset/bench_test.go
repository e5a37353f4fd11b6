package changeset

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkRecompute measures computing an uncommitted changeset of a
// 2,000-file repository with 50 changed and 10 new files, against the
// baseline of one `git status` over the same tree (what an editor runs to
// show the same changes), in the same run.
func BenchmarkRecompute(b *testing.B) {
	bin, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%40), fmt.Sprintf("f%04d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("line one of %d\nline two\nline three\n", i)), 0o644)
	}
	run("add", "-A")
	run("-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "init")
	for i := range 50 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", (i*40)%40+i%40), fmt.Sprintf("f%04d.txt", i*40+i%40))
		os.WriteFile(p, []byte("changed\n"), 0o644)
	}
	for i := range 10 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("new%d.txt", i)), []byte("new\n"), 0o644)
	}
	g := &git{bin: bin, dir: dir}
	ctx := context.Background()
	head, err := g.head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=git-status", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.run(ctx, nil, "status", "--porcelain=v2", "-z", "--untracked-files=all"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("changeset", func(b *testing.B) {
		m := &Manager{opts: Options{MaxContentBytes: DefaultMaxContentBytes, MaxFiles: DefaultMaxFiles}}
		t := newTracker(m, "ahp-session:/bench")
		s := &set{t: t, kind: KindUncommitted, dir: dir, key: "k", g: g, from: head}
		for b.Loop() {
			entries, err := s.compute(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if len(entries) != 60 {
				b.Fatalf("%d files, want 60", len(entries))
			}
		}
	})
}
