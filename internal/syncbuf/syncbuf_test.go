package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWrites(t *testing.T) {
	tests := []struct {
		name             string
		writers, perEach int
	}{
		{"none", 0, 0},
		{"one", 1, 10},
		{"many", 8, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Buffer
			var wg sync.WaitGroup
			for range tt.writers {
				wg.Go(func() {
					for range tt.perEach {
						if n, err := b.Write([]byte("ab\n")); n != 3 || err != nil {
							t.Errorf("Write = %d, %v", n, err)
						}
						_ = b.String()
					}
				})
			}
			wg.Wait()
			got := b.String()
			if want := strings.Repeat("ab\n", tt.writers*tt.perEach); got != want {
				t.Fatalf("got %d bytes, want %d", len(got), len(want))
			}
		})
	}
}
