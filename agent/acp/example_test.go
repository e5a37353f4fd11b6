package acp_test

import (
	"fmt"

	"github.com/ahp-go/ahp/agent/acp"
)

func ExampleParseFlag() {
	cfg, err := acp.ParseFlag(`claude=npx -y "@zed-industries/claude-code-acp"`)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Name)
	fmt.Println(cfg.Command)
	fmt.Printf("%q\n", cfg.Args)
	// Output:
	// claude
	// npx
	// ["-y" "@zed-industries/claude-code-acp"]
}
