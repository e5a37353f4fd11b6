package modroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, sub} {
		if got, err := Find(dir); err != nil || got != root {
			t.Errorf("Find(%s) = %q, %v; want %q", dir, got, err, root)
		}
	}
	if got, err := Find(filepath.Dir(root)); err == nil && got == root {
		t.Errorf("Find above the module found %q", got)
	}
}

func TestHere(t *testing.T) {
	root, err := Here()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "modroot", "modroot.go")); err != nil {
		t.Fatalf("%s is not this module's root: %v", root, err)
	}
}
