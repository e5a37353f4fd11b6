package completion

import (
	"fmt"
	"os/exec"
	"testing"
)

// benchTree writes n files in folders of 100.
func benchTree(b *testing.B, n int) string {
	root := b.TempDir()
	var files []string
	for i := range n {
		files = append(files, fmt.Sprintf("pkg%03d/sub/file_%05d.go", i/100, i))
	}
	write(b, root, files...)
	return root
}

// BenchmarkFind measures one "@" search of 10 000 files, by a walk and
// through git ls-files (untracked files, not ignored).
func BenchmarkFind(b *testing.B) {
	root := benchTree(b, 10000)
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			if got := Find(b.Context(), []string{root}, "fl42", 50); len(got) == 0 {
				b.Fatal("nothing found")
			}
		}
	})
	gitRoot := benchTree(b, 10000)
	if out, err := exec.Command("git", "init", "-q", gitRoot).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			if got := Find(b.Context(), []string{gitRoot}, "fl42", 50); len(got) == 0 {
				b.Fatal("nothing found")
			}
		}
	})
}
