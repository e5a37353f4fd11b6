package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/specdir"
)

func TestStripDescriptions(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"keyword", `{"type":"string","description":"prose"}`, `{"type":"string"}`},
		{"nested", `{"$defs":{"A":{"description":"x","properties":{"b":{"description":"y","type":"number"}}}}}`,
			`{"$defs":{"A":{"properties":{"b":{"type":"number"}}}}}`},
		{"property named description", `{"properties":{"description":{"type":"string","description":"z"}},"required":["description"]}`,
			`{"properties":{"description":{"type":"string"}},"required":["description"]}`},
		{"definition named description", `{"$defs":{"description":{"type":"string"}}}`, `{"$defs":{"description":{"type":"string"}}}`},
		{"in arrays", `{"oneOf":[{"description":"a","const":1},{"const":{"description":"kept"}}]}`,
			`{"oneOf":[{"const":1},{"const":{"description":"kept"}}]}`},
		{"order kept", `{"z":1,"description":"d","a":2}`, `{"z":1,"a":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stripDescriptions([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if compact(t, got) != tc.want {
				t.Errorf("got %s, want %s", compact(t, got), tc.want)
			}
		})
	}
	if _, err := stripDescriptions([]byte(`{"a":`)); err == nil {
		t.Error("truncated JSON: no error")
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := jsonCompact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestCopyCurrent checks that testdata/spec holds what specsync would copy
// from the reference packs beside the module, when they are there.
func TestCopyCurrent(t *testing.T) {
	for _, p := range []specdir.Pack{specdir.V1, specdir.V0} {
		src, err := p.Upstream()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(src); err != nil {
			// A clone on its own has only the copy; CI has the packs
			// beside it and must compare.
			if os.Getenv("CI") == "true" {
				t.Fatalf("no reference pack at %s to compare with", src)
			}
			t.Logf("no reference pack at %s: only the copy is used", src)
			return
		}
		kept, err := p.Dir()
		if err != nil {
			t.Fatal(err)
		}
		fresh := t.TempDir()
		if err := syncPack(src, fresh); err != nil {
			t.Fatal(err)
		}
		want, got := readTree(t, fresh), readTree(t, kept)
		for name, data := range want {
			if !bytes.Equal(got[name], data) {
				t.Errorf("%s: testdata differs from the reference; run go run ./internal/gen/specsync", name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s: in testdata but not in the reference; run go run ./internal/gen/specsync", name)
			}
		}
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := make(map[string][]byte)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func jsonCompact(dst *bytes.Buffer, src []byte) error {
	v := jsontext.Value(bytes.Clone(src))
	if err := v.Compact(); err != nil {
		return err
	}
	dst.Write(v)
	return nil
}
