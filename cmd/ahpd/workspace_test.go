package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWorkspaceFlags(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	cfg, err := parseConfig([]string{"--root", dir, "--root", other, "--requestable-root", other, "--max-read-bytes", "1024"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Roots) != 2 || cfg.Roots[0] != dir || cfg.DefaultDirectory != dir || cfg.MaxReadBytes != 1024 || len(cfg.RequestableRoots) != 1 {
		t.Fatalf("workspace config %+v", cfg.workspaceConfig)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for _, args := range [][]string{
		{"--root", filepath.Join(dir, "missing")},
		{"--root", file},
		{"--requestable-root", file},
		{"--max-read-bytes", "0"},
	} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
