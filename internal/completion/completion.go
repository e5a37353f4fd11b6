// Package completion finds what a user can reference while composing a
// message: files and folders under a session's working directories,
// matched fuzzily against what follows an "@", and the agent's slash
// commands. It also converts between the UTF-16 offsets of the protocol
// and Go's byte offsets.
//
// Listing a directory is bounded in time by the caller's context and in
// size by MaxEntries. In a git work tree the files come from
// git ls-files (tracked and untracked, without what git ignores);
// elsewhere from a walk that skips dot-directories and node_modules, and
// git is not started.
package completion

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxEntries bounds how many files and folders one directory contributes
// to a search.
const MaxEntries = 50000

// Entry is a file or folder under a root directory.
type Entry struct {
	Root string // the absolute root directory
	Rel  string // slash-separated path below Root
	Dir  bool
}

// Path returns the entry's absolute path.
func (e Entry) Path() string { return filepath.Join(e.Root, filepath.FromSlash(e.Rel)) }

// List returns the files and folders under root, at most max of them. It
// stops early, returning what it has, when ctx is done.
func List(ctx context.Context, root string, max int) ([]Entry, error) {
	if mayBeGitWorkTree(root) {
		if entries, err := gitList(ctx, root, max); err == nil {
			return entries, nil
		} else if ctx.Err() != nil {
			return entries, nil
		}
	}
	return walk(ctx, root, max)
}

// mayBeGitWorkTree reports whether git could find a repository for root:
// root or a folder above it holds a ".git" (a folder, or the file of a
// linked work tree or submodule), or GIT_DIR names one. Elsewhere git is
// not started at all: starting it takes a good part of a search's time on
// a busy machine, only for git to say there is no repository.
func mayBeGitWorkTree(root string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return true
	}
	for dir := filepath.Clean(root); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// gitList lists the work tree's tracked and untracked files that git does
// not ignore, with the folders that hold them. It fails when root is not
// in a git work tree or git is not installed.
func gitList(ctx context.Context, root string, max int) ([]Entry, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops git when max is reached
	// Run in root, git prints the paths below it relative to it.
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var entries []Entry
	dirs := map[string]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	sc.Split(splitNUL)
	for sc.Scan() && len(entries) < max {
		rel := sc.Text()
		if rel == "" || strings.HasPrefix(rel, "../") {
			continue
		}
		// The folders above the file, each once.
		for d := path.Dir(rel); d != "." && !dirs[d] && len(entries) < max; d = path.Dir(d) {
			dirs[d] = true
			entries = append(entries, Entry{Root: root, Rel: d, Dir: true})
		}
		if len(entries) < max {
			entries = append(entries, Entry{Root: root, Rel: rel})
		}
	}
	stopped := len(entries) >= max
	if stopped {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if werr != nil && !stopped && ctx.Err() == nil {
		return nil, errors.New("git ls-files: " + strings.TrimSpace(stderr.String()))
	}
	return entries, nil
}

func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// skipDir reports the folders a walk does not enter.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

// walk lists root breadth-first, so that a bound keeps the shallow
// entries, skipping dot-directories, dot-files and node_modules.
func walk(ctx context.Context, root string, max int) ([]Entry, error) {
	var entries []Entry
	queue := []string{""}
	for len(queue) > 0 && len(entries) < max {
		if ctx.Err() != nil {
			break
		}
		rel := queue[0]
		queue = queue[1:]
		list, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			if rel == "" {
				return nil, err
			}
			continue // unreadable below the root: skipped
		}
		for _, d := range list {
			name := d.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			child := path.Join(rel, name)
			if d.IsDir() {
				if skipDir(name) {
					continue
				}
				queue = append(queue, child)
				entries = append(entries, Entry{Root: root, Rel: child, Dir: true})
			} else if d.Type().IsRegular() {
				entries = append(entries, Entry{Root: root, Rel: child})
			}
			if len(entries) >= max {
				break
			}
		}
	}
	return entries, nil
}

// Match is an entry with its score against a query.
type Match struct {
	Entry
	Score int
}

// Find lists each root (in order, until ctx is done) and returns the
// limit best matches of query, best first. An empty query matches
// everything, the shallowest first.
func Find(ctx context.Context, roots []string, query string, limit int) []Match {
	var out []Match
	for _, root := range roots {
		if ctx.Err() != nil {
			break
		}
		entries, err := List(ctx, root, MaxEntries)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if s, ok := Score(query, e.Rel); ok {
				out = append(out, Match{Entry: e, Score: s})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(strings.Count(a.Rel, "/"), strings.Count(b.Rel, "/")); c != 0 {
			return c
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Score matches query against a slash-separated path as a case-insensitive
// subsequence. It reports false when the path does not hold the query's
// characters in order. Higher is better: characters that start a path
// segment or a word, runs of consecutive characters, a match inside the
// last segment, and short paths score more.
func Score(query, p string) (int, bool) {
	if query == "" {
		return 0, true
	}
	q := []rune(strings.ToLower(query))
	r := []rune(p)
	lower := []rune(strings.ToLower(p))
	if len(lower) != len(r) {
		lower = make([]rune, len(r))
		for i, c := range r {
			lower[i] = unicode.ToLower(c)
		}
	}
	base := strings.LastIndexByte(p, '/') + 1
	baseRunes := utf8.RuneCountInString(p[:base])
	score, qi, prev := 0, 0, -2
	for i := 0; i < len(lower) && qi < len(q); i++ {
		if lower[i] != q[qi] {
			continue
		}
		s := 1
		switch {
		case i == 0 || r[i-1] == '/':
			s += 8
		case isBoundary(r[i-1], r[i]):
			s += 5
		}
		if prev == i-1 {
			s += 7
		}
		if i >= baseRunes {
			s += 2
		}
		score += s
		prev = i
		qi++
	}
	if qi < len(q) {
		return 0, false
	}
	return score*16 - len(r), true
}

// isBoundary reports a word start inside a segment: after a separator,
// or an upper-case letter after a lower-case one.
func isBoundary(before, c rune) bool {
	switch before {
	case '_', '-', '.', ' ':
		return true
	}
	return unicode.IsLower(before) && unicode.IsUpper(c)
}

// UTF16Len returns the length of s in UTF-16 code units.
func UTF16Len(s string) int {
	n := 0
	for _, c := range s {
		n += utf16.RuneLen(c)
	}
	return n
}

// ByteOffset converts an offset in UTF-16 code units into s to a byte
// offset. It reports false when off is negative, past the end, or inside
// a surrogate pair.
func ByteOffset(s string, off int) (int, bool) {
	if off < 0 {
		return 0, false
	}
	n := 0
	for i, c := range s {
		if n == off {
			return i, true
		}
		n += utf16.RuneLen(c)
		if n > off {
			return 0, false
		}
	}
	if n != off {
		return 0, false
	}
	return len(s), true
}

// Word is the whitespace-delimited word around a cursor.
type Word struct {
	Text       string // from the word's start to the cursor
	Start, End int    // byte offsets of the whole word
	First      bool   // nothing but whitespace comes before it
}

// WordAt returns the word that the cursor at byte offset cur ends or sits
// in.
func WordAt(text string, cur int) Word {
	start := cur
	for start > 0 {
		c, size := utf8.DecodeLastRuneInString(text[:start])
		if unicode.IsSpace(c) {
			break
		}
		start -= size
	}
	end := cur
	for end < len(text) {
		c, size := utf8.DecodeRuneInString(text[end:])
		if unicode.IsSpace(c) {
			break
		}
		end += size
	}
	return Word{Text: text[start:cur], Start: start, End: end, First: strings.TrimSpace(text[:start]) == ""}
}

// Position returns the line and the UTF-16 character within that line of
// byte offset off in text.
func Position(text string, off int) (line, char int) {
	before := text[:off]
	line = strings.Count(before, "\n")
	return line, UTF16Len(before[strings.LastIndexByte(before, '\n')+1:])
}
