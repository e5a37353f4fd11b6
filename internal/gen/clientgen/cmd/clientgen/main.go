// Command clientgen writes client/handlers_gen.go from the protocol's
// method table. It is run by go generate in the protocol package, after
// the table is generated.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/ahp-go/ahp/internal/gen/clientgen"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("clientgen: ")
	out := flag.String("out", "../client/handlers_gen.go", "the file to write")
	flag.Parse()
	src, err := clientgen.Generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
