package protocol

import (
	"strings"
	"sync"
	"testing"
)

// Every Text keeps its own value whatever is appended to it or to the
// values it came from, and the newest value of a buffer grows in place.
func TestTextAppend(t *testing.T) {
	a := TextOf("hello")
	b := a.Append(", world")
	c := a.Append("!") // a is no longer its buffer's newest value: copies
	d := b.Append(" and more")
	if a.String() != "hello" || b.String() != "hello, world" || c.String() != "hello!" || d.String() != "hello, world and more" {
		t.Fatalf("got %q %q %q %q", a, b, c, d)
	}
	e := d.Append("?")
	if &e.b[0] != &d.b[0] {
		t.Fatal("appending to the newest value copied its buffer")
	}
	if f := d.Append("."); &f.b[0] == &e.b[0] || f.String() != "hello, world and more." || e.String() != "hello, world and more?" {
		t.Fatalf("appending to an older value: %q (and %q)", f, e)
	}
}

// Suffix cuts a text's start without copying, and what follows is still
// appended in place, once per value.
func TestTextSuffix(t *testing.T) {
	long := Text{}.Append(strings.Repeat("a", 100) + "tail")
	s := long.Suffix(4)
	if s.String() != "tail" || long.Suffix(1000).String() != long.String() || long.Suffix(0).Len() != 0 {
		t.Fatalf("suffixes %q, %d, %d", s, long.Suffix(1000).Len(), long.Suffix(0).Len())
	}
	if &s.b[0] != &long.b[100] {
		t.Fatal("Suffix copied")
	}
	grown := s.Append("+more")
	if &grown.b[0] != &s.b[0] || grown.String() != "tail+more" {
		t.Fatalf("appending to a suffix: %q, in place %v", grown, &grown.b[0] == &s.b[0])
	}
	// long and s ended at the same byte; grown took that end, so long
	// copies now and neither value sees the other's bytes.
	other := long.Append("!")
	if other.String() != strings.Repeat("a", 100)+"tail!" || grown.String() != "tail+more" {
		t.Fatalf("after appending to the original: %q and %q", other, grown)
	}
	// Outgrowing the buffer keeps only the suffix.
	big := grown.Append(strings.Repeat("b", 1000))
	if big.Len() != len("tail+more")+1000 || cap(big.b) > 4*big.Len() {
		t.Fatalf("grown suffix: %d bytes in a buffer of %d", big.Len(), cap(big.b))
	}
}

// Values sharing a buffer may be appended to concurrently (run with -race).
func TestTextConcurrentAppend(t *testing.T) {
	base := Text{}.Append("base")
	var wg sync.WaitGroup
	got := make([]Text, 8)
	for i := range got {
		wg.Go(func() {
			v := base
			if i%2 == 1 {
				v = base.Suffix(2)
			}
			for range 100 {
				v = v.Append("x")
			}
			got[i] = v
		})
	}
	wg.Wait()
	for i, v := range got {
		want := "base"
		if i%2 == 1 {
			want = "se"
		}
		if v.String() != want+strings.Repeat("x", 100) {
			t.Fatalf("value %d: %q", i, v)
		}
	}
}
