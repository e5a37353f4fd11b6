package acp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestKnownLogins(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"codex-acp", "codex", "gemini", "other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lonely := t.TempDir() // a codex-acp with no codex beside it
	if err := os.WriteFile(filepath.Join(lonely, "codex-acp"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		method  string
		want    []string // nil: no command for method
		wantLen int
	}{
		{"codex", Config{Command: filepath.Join(dir, "codex-acp")}, "chat-gpt", []string{filepath.Join(dir, "codex"), "login"}, 1},
		{"gemini", Config{Command: filepath.Join(dir, "gemini"), Args: []string{"--acp"}}, "oauth-personal", []string{filepath.Join(dir, "gemini")}, 1},
		{"configured wins", Config{Command: filepath.Join(dir, "codex-acp"), LoginCommands: map[string][]string{"chat-gpt": {"mine"}}}, "chat-gpt", []string{"mine"}, 1},
		{"other agent", Config{Command: filepath.Join(dir, "other")}, "chat-gpt", nil, 0},
		{"login program missing", Config{Command: filepath.Join(lonely, "codex-acp")}, "chat-gpt", nil, 0},
		{"command not found", Config{Command: filepath.Join(dir, "missing")}, "chat-gpt", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps2slice(tc.cfg.LoginCommands)
			got := withKnownLogins(tc.cfg)
			if !slices.Equal(got[tc.method], tc.want) || len(got) != tc.wantLen {
				t.Fatalf("login commands %q, want %q for %s", got, tc.want, tc.method)
			}
			if after := maps2slice(tc.cfg.LoginCommands); !slices.Equal(before, after) {
				t.Fatalf("the configuration's map changed: %q, was %q", after, before)
			}
		})
	}
}

func maps2slice(m map[string][]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+filepath.Join(v...))
	}
	slices.Sort(out)
	return out
}
