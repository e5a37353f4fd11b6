// Command wiregen writes the generated wire types of package protocol from
// the AHP JSON Schemas. It is run by `go generate` in the protocol folder.
//
// The schema folder is testdata/spec/spec-1.1/schema in the module (see
// internal/gen/specsync), or $AHP_SPEC_1_DIR/schema when that is set.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ahp-go/ahp/internal/gen/wiregen"
	"github.com/ahp-go/ahp/internal/specdir"
)

func main() {
	out := flag.String("out", ".", "folder to write the *_gen.go files into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := specdir.V1.Dir()
	if err != nil {
		return err
	}
	files, err := wiregen.Generate(filepath.Join(dir, "schema"))
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(out, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
