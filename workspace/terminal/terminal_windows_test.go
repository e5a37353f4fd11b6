//go:build windows

package terminal

import (
	"errors"
	"testing"
)

// Without a PTY a terminal does not start, and says why.
func TestStartWithoutPTY(t *testing.T) {
	if err := Supported(); !errors.Is(err, ErrNoPTY) {
		t.Fatalf("Supported() = %v, want ErrNoPTY", err)
	}
	p, err := Start(Spec{Command: []string{"cmd.exe"}, Dir: t.TempDir()}, func(Event) {})
	if !errors.Is(err, ErrNoPTY) || p != nil {
		t.Fatalf("Start = %v, %v; want nil, ErrNoPTY", p, err)
	}
}
