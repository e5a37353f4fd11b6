// Command gendata writes protocol/data_gen.go from the spec's data files.
// It is run by go generate in the protocol package; see README.md.
//
// The spec folders are $AHP_SPEC_1_DIR (or testdata/spec/spec-1.1) and, for
// the versions before 1.x, $AHP_SPEC_DIR (or testdata/spec/spec), in the
// module root, the nearest directory holding go.mod at or above the working
// directory.
package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"

	"github.com/ahp-go/ahp/internal/gen/gendata/datagen"
	"github.com/ahp-go/ahp/internal/modroot"
	"github.com/ahp-go/ahp/internal/specdir"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("gendata: ")
	if len(os.Args) > 1 {
		log.Fatal("usage: gendata (no arguments; set AHP_SPEC_DIR to move the spec folder)")
	}
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := modroot.Find(wd)
	if err != nil {
		return err
	}
	specDir, err := specdir.V1.Dir()
	if err != nil {
		return err
	}
	legacyDir, err := specdir.V0.Dir()
	if err != nil {
		return err
	}
	pkgDir := filepath.Join(root, "protocol")
	src, err := datagen.Generate(specDir, legacyDir, pkgDir)
	if err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(pkgDir, datagen.OutputFile), src)
}

// writeIfChanged writes src to path unless the file already holds it, going
// through a temporary file so that a failed run never leaves half a file.
func writeIfChanged(path string, src []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, src) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gendata-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
