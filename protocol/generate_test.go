package protocol_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/ahp-go/ahp/internal/gen/wiregen"
	"github.com/ahp-go/ahp/internal/specdir"
)

// TestGeneratedUpToDate fails when the committed *_gen.go files differ from
// what `go generate` would write from the schemas now.
func TestGeneratedUpToDate(t *testing.T) {
	dir := specdir.V1.ForTest(t, "schema")
	files, err := wiregen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("generator produced no files")
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v (run go generate ./protocol)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./protocol", name)
		}
	}
}
