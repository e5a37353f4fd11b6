// Command specsync copies the parts of the AHP protocol reference packs that
// the generators and tests read into the module's testdata/spec folder, so a
// clone of the repository generates and tests everything on its own.
//
// It reads the packs from ../shared beside the module root (or the folders
// named by $AHP_SPEC_1_DIR and $AHP_SPEC_DIR) and copies, for each pack, its
// LICENSE, the JSON Schemas with their "description" annotations left out
// (the schemas' prose stays upstream), the data tables and the test cases.
// Run it from anywhere inside the module after the reference changes:
//
//	go run ./internal/gen/specsync
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/specdir"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("specsync: ")
	if len(os.Args) > 1 {
		log.Fatal("usage: specsync (no arguments)")
	}
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	for _, p := range []specdir.Pack{specdir.V1, specdir.V0} {
		src, err := p.Upstream()
		if err != nil {
			return err
		}
		dst, err := p.Dir()
		if err != nil {
			return err
		}
		if src == dst {
			return fmt.Errorf("%s is both the source and the copy; unset %s", src, p.Env())
		}
		if err := syncPack(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// syncPack replaces dst with the parts of the pack at src that are kept.
func syncPack(src, dst string) error {
	if _, err := os.Stat(filepath.Join(src, "schema")); err != nil {
		return fmt.Errorf("no protocol reference at %s: %w", src, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	for _, dir := range []string{"schema", "data", "test-cases"} {
		err := filepath.WalkDir(filepath.Join(src, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(src, path)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if dir == "schema" && strings.HasSuffix(path, ".schema.json") {
				if data, err = stripDescriptions(data); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			}
			return write(filepath.Join(dst, rel), data)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	licence, err := os.ReadFile(filepath.Join(src, "LICENSE"))
	if err != nil {
		return err
	}
	return write(filepath.Join(dst, "LICENSE"), licence)
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// stripDescriptions drops every "description" keyword of a JSON Schema,
// keeping members of that name where they are property names (under
// "properties", "$defs" and the like), and keeps the order of the rest.
func stripDescriptions(data []byte) ([]byte, error) {
	var doc jsontext.Value
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(doc))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.WithIndent("  "))
	if err := copySchema(dec, enc, false); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// namedMembers are the keywords whose object members are names chosen by
// the schema's author, not keywords.
var namedMembers = map[string]bool{"properties": true, "$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true}

// literalMembers are the keywords whose values are instances, copied as
// they are.
var literalMembers = map[string]bool{"const": true, "default": true, "enum": true, "examples": true}

// copySchema copies one value from dec to enc. In a schema object (names is
// false) the "description" member is skipped; in an object of named members
// every member is kept and each value is a schema.
func copySchema(dec *jsontext.Decoder, enc *jsontext.Encoder, names bool) error {
	switch dec.PeekKind() {
	case '{':
		if err := copyToken(dec, enc); err != nil {
			return err
		}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			name := tok.String()
			if !names && name == "description" {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				continue
			}
			if err := enc.WriteToken(tok); err != nil {
				return err
			}
			if !names && literalMembers[name] {
				v, err := dec.ReadValue()
				if err != nil {
					return err
				}
				if err := enc.WriteValue(v); err != nil {
					return err
				}
				continue
			}
			if err := copySchema(dec, enc, !names && namedMembers[name]); err != nil {
				return err
			}
		}
		return copyToken(dec, enc)
	case '[':
		if err := copyToken(dec, enc); err != nil {
			return err
		}
		for dec.PeekKind() != ']' {
			if err := copySchema(dec, enc, false); err != nil {
				return err
			}
		}
		return copyToken(dec, enc)
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return enc.WriteValue(v)
	}
}

func copyToken(dec *jsontext.Decoder, enc *jsontext.Encoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	return enc.WriteToken(tok)
}
