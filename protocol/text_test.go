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

// A long text is kept in blocks: appending never copies them, older values
// share them, and Suffix, String, Equal and JSON see one string.
func TestTextBlocks(t *testing.T) {
	piece := strings.Repeat("0123456789abcdef", 64) // 1 KiB
	var v Text
	var want strings.Builder
	var mid Text
	for i := range 3000 {
		v = v.Append(piece)
		want.WriteString(piece)
		if i == 1500 {
			mid = v
		}
	}
	if v.head() == nil || len(v.head().blocks) != 2 || v.Len() != want.Len() || v.String() != want.String() {
		t.Fatalf("3000 KiB: %d bytes, head %v", v.Len(), v.head() != nil)
	}
	if &mid.head().blocks[0][0] != &v.head().blocks[0][0] {
		t.Fatal("an older value does not share the first block")
	}
	if mid.String() != want.String()[:1501*len(piece)] {
		t.Fatal("an older value changed")
	}
	// Appending to the older value copies at most its tail.
	fork := mid.Append("!")
	if fork.String() != want.String()[:1501*len(piece)]+"!" || &fork.head().blocks[0][0] != &v.head().blocks[0][0] {
		t.Fatal("appending to an older value")
	}
	for _, n := range []int{0, 1, len(piece), textBlock, textBlock + 7, 2*textBlock + 1, v.Len() - 1, v.Len(), v.Len() + 1} {
		w := want.String()[want.Len()-min(n, want.Len()):]
		if got := v.Suffix(n); got.Len() != len(w) || got.String() != w || !got.Equal(TextOf(w)) {
			t.Fatalf("Suffix(%d): %d bytes", n, got.Len())
		}
		if got := v.Suffix(n).Append("x").String(); got != w+"x" {
			t.Fatalf("Suffix(%d) then Append: %d bytes", n, len(got))
		}
	}
	if v.Equal(mid) || !v.Equal(TextOf(want.String())) {
		t.Fatal("Equal")
	}
	data, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back Text
	if err := Unmarshal(data, &back); err != nil || !back.Equal(v) {
		t.Fatalf("JSON round trip: %v", err)
	}
}

// TestTextSlice: Slice gives the bytes String would, across block edges,
// in a text of one buffer, of blocks, and cut by Suffix.
func TestTextSlice(t *testing.T) {
	piece := strings.Repeat("0123456789abcdef", 64) // 1 KiB
	var long Text
	for range 2500 {
		long = long.Append(piece)
	}
	for _, tc := range []struct {
		name string
		v    Text
	}{
		{"empty", Text{}},
		{"one buffer", TextOf("hello, world")},
		{"blocks", long},
		{"suffix of blocks", long.Suffix(textBlock + 100)},
		{"suffix in the tail", long.Suffix(100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, n := tc.v.String(), tc.v.Len()
			for _, r := range [][2]int{{0, 0}, {0, n}, {n, n}, {0, min(n, 5)}, {n / 3, n / 2}, {max(0, n-textBlock-3), min(n, n-textBlock+3+max(0, textBlock-n))}, {max(0, textBlock-2), min(n, textBlock+2)}} {
				i, j := min(r[0], n), min(r[1], n)
				if i > j {
					i = j
				}
				if got := tc.v.Slice(i, j); got != s[i:j] {
					t.Errorf("Slice(%d, %d): %d bytes, want %d", i, j, len(got), j-i)
				}
			}
		})
	}
}
