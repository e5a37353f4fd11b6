package changeset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// git runs the git command line in one directory. The command line is
// used rather than a Go implementation of git because it reads every
// repository the user's own git reads (worktrees, sparse and partial
// clones, index extensions, SHA-256 object formats, attributes, LFS
// filters) exactly as the user's tools see it.
type git struct {
	bin string // the git executable
	dir string // absolute working directory the commands run in
}

// gitTimeout bounds one git command: a hung command (a lock, a network
// filesystem, a hook) must not keep a changeset computing for ever.
const gitTimeout = 2 * time.Minute

// maxGitOutput bounds what is read from one command's standard output.
const maxGitOutput = 64 << 20

// gitError is a failed git command with what it wrote on stderr.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return "git " + e.args[0] + ": " + msg
}

func (e *gitError) Unwrap() error { return e.err }

// env is the environment git runs with: no prompts, no pager, no
// optional locks (so that reading does not block the user's own git),
// pathspecs taken literally (a file named "*" or ":(top)" is that file).
func gitEnv() []string {
	env := os.Environ()
	return append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_PAGER=cat",
		"LC_ALL=C",
	)
}

// run runs git with args and returns its standard output, at most limit
// bytes (0 means maxGitOutput); more is an error.
func (g *git) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return g.runLimit(ctx, stdin, maxGitOutput, args...)
}

var errTooLarge = errors.New("output over the limit")

func (g *git) runLimit(ctx context.Context, stdin []byte, limit int64, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	full := append([]string{"-c", "core.fsmonitor=false", "-c", "core.quotepath=false", "-c", "color.ui=false"}, args...)
	cmd := exec.CommandContext(ctx, g.bin, full...)
	cmd.Dir = g.dir
	cmd.Env = gitEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 16 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("changeset: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, &gitError{args: args, err: err}
	}
	data, rerr := io.ReadAll(io.LimitReader(out, limit+1))
	if rerr == nil && int64(len(data)) > limit {
		cancel()
		cmd.Wait()
		return nil, &gitError{args: args, err: errTooLarge}
	}
	if err := cmd.Wait(); err != nil {
		return data, &gitError{args: args, stderr: stderr.String(), err: err}
	}
	if rerr != nil {
		return nil, &gitError{args: args, err: rerr}
	}
	return data, nil
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// exitCode returns the exit status of a failed git command, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// repoInfo is what a directory is within its repository.
type repoInfo struct {
	top    string // the worktree's top directory
	prefix string // the directory relative to top, "" or ending in "/"
}

// repo reports the repository the directory is in; ok is false when it is
// not in one.
func (g *git) repo(ctx context.Context) (info repoInfo, ok bool, err error) {
	out, err := g.run(ctx, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && exitCode(ge.err) == 128 {
			return repoInfo{}, false, nil // not a repository
		}
		return repoInfo{}, false, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "true" {
		return repoInfo{}, false, nil
	}
	info.top = lines[1]
	if len(lines) > 2 {
		info.prefix = lines[2]
	}
	return info, true, nil
}

// head returns the commit HEAD names, or "" on an unborn branch.
func (g *git) head(ctx context.Context) (string, error) {
	out, err := g.run(ctx, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && exitCode(ge.err) == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// emptyTree returns the id of the empty tree in the repository's object
// format, the "before" of a repository without commits.
func (g *git) emptyTree(ctx context.Context) (string, error) {
	out, err := g.run(ctx, []byte{}, "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// branch returns the checked-out branch's short name, or "" when HEAD is
// detached.
func (g *git) branch(ctx context.Context) string {
	out, err := g.run(ctx, nil, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// verify returns the commit a ref names, or "" when it names none.
func (g *git) verify(ctx context.Context, ref string) string {
	out, err := g.run(ctx, nil, "rev-parse", "-q", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// base finds the branch the checked-out branch is based on: the remote's
// default branch when the repository has one, else a local or remote main
// or master. It returns the base's name and the fork point (the merge
// base with HEAD); ok is false on the base branch itself, on a detached
// HEAD, or when there is no base.
func (g *git) base(ctx context.Context, head string) (name, forkPoint string, ok bool) {
	cur := g.branch(ctx)
	if cur == "" || head == "" {
		return "", "", false
	}
	var candidates []string
	if out, err := g.run(ctx, nil, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, "main", "master", "origin/main", "origin/master")
	for _, c := range candidates {
		short := c
		if i := strings.IndexByte(c, '/'); i >= 0 {
			short = c[i+1:]
		}
		if short == cur {
			return "", "", false // on the base branch
		}
		if g.verify(ctx, c) == "" {
			continue
		}
		out, err := g.run(ctx, nil, "merge-base", head, c)
		if err != nil {
			return "", "", false
		}
		return c, strings.TrimSpace(string(out)), true
	}
	return "", "", false
}

// status is how a file changed, as git's raw diff letters say.
type status byte

const (
	added     status = 'A'
	modified  status = 'M'
	deleted   status = 'D'
	renamed   status = 'R'
	copied    status = 'C'
	typeChg   status = 'T'
	untracked status = '?'
)

// change is one changed file, with paths relative to the directory.
type change struct {
	status  status
	path    string // the path after the change ("" never)
	oldPath string // the path before, for renames and copies; else path
	oldMode string // "000000" when the file did not exist before
	newMode string
	// added and removed lines; binary is set when git counts none.
	added, removed int64
	binary         bool
	counted        bool
}

// diff lists the files that differ between a commit (or tree) and another
// commit, or the working tree when to is "", within the directory.
func (g *git) diff(ctx context.Context, from, to string) ([]change, error) {
	args := []string{"diff", "--raw", "--numstat", "-z", "-M", "--relative", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", from}
	if to != "" {
		args = append(args, to)
	}
	args = append(args, "--")
	out, err := g.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return parseDiff(out)
}

// parseDiff reads the output of diff --raw --numstat -z: the raw records
// first, then one numstat record per file, in the same order.
func parseDiff(out []byte) ([]change, error) {
	fields := strings.Split(string(out), "\x00")
	var list []change
	i := 0
	next := func() (string, bool) {
		if i >= len(fields) {
			return "", false
		}
		f := fields[i]
		i++
		return f, true
	}
	for i < len(fields) && strings.HasPrefix(fields[i], ":") {
		head, _ := next()
		parts := strings.Fields(head[1:])
		if len(parts) != 5 || parts[4] == "" {
			return nil, fmt.Errorf("changeset: unexpected git diff record %q", head)
		}
		c := change{status: status(parts[4][0]), oldMode: parts[0], newMode: parts[1]}
		p, ok := next()
		if !ok {
			return nil, errors.New("changeset: truncated git diff output")
		}
		c.path, c.oldPath = p, p
		if c.status == renamed || c.status == copied {
			if c.path, ok = next(); !ok {
				return nil, errors.New("changeset: truncated git diff output")
			}
		}
		list = append(list, c)
	}
	for k := range list {
		rec, ok := next()
		if !ok {
			break
		}
		cols := strings.SplitN(rec, "\t", 3)
		if len(cols) != 3 {
			return nil, fmt.Errorf("changeset: unexpected git numstat record %q", rec)
		}
		if cols[2] == "" { // a rename: the two paths follow
			next()
			next()
		}
		c := &list[k]
		if cols[0] == "-" {
			c.binary, c.counted = true, true
			continue
		}
		a, err1 := strconv.ParseInt(cols[0], 10, 64)
		r, err2 := strconv.ParseInt(cols[1], 10, 64)
		if err1 == nil && err2 == nil {
			c.added, c.removed, c.counted = a, r, true
		}
	}
	// Gitlinks (submodules) and paths that are not local are left out: a
	// changeset shows files inside its directory only.
	out2 := list[:0]
	for _, c := range list {
		if c.newMode == "160000" || c.oldMode == "160000" || !filepath.IsLocal(c.path) || !filepath.IsLocal(c.oldPath) {
			continue
		}
		out2 = append(out2, c)
	}
	return out2, nil
}

// untracked lists the files git does not track and does not ignore, within
// the directory.
func (g *git) untracked(ctx context.Context) ([]string, error) {
	out, err := g.run(ctx, nil, "ls-files", "-z", "--others", "--exclude-standard", "--")
	if err != nil {
		return nil, err
	}
	var list []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" && filepath.IsLocal(p) {
			list = append(list, p)
		}
	}
	return list, nil
}

// show returns a file's content at a commit, path relative to the
// directory, at most limit bytes (errTooLarge beyond).
func (g *git) show(ctx context.Context, rev, rel string, limit int64) ([]byte, error) {
	return g.runLimit(ctx, nil, limit, "cat-file", "blob", rev+":./"+filepath.ToSlash(rel))
}

// hunk is one hunk of a zero-context diff: the lines start (1-based) and
// count on each side, and the lines removed from the old side.
type hunk struct {
	oldStart, oldCount int
	newStart, newCount int
	removed            []string // each with its line ending
}

// hunks returns the zero-context hunks between a commit and the working
// tree for one file.
func (g *git) hunks(ctx context.Context, rev, rel string) ([]hunk, bool, error) {
	out, err := g.run(ctx, nil, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--relative", rev, "--", rel)
	if err != nil {
		return nil, false, err
	}
	return parseHunks(out)
}

// parseHunks reads a unified diff of one file; binary reports a binary
// file, which has no hunks.
func parseHunks(out []byte) (list []hunk, binary bool, err error) {
	lines := strings.SplitAfter(string(out), "\n")
	var cur *hunk
	lastRemoved := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
			return nil, true, nil
		case strings.HasPrefix(l, "@@ "):
			h, err := parseHunkHeader(l)
			if err != nil {
				return nil, false, err
			}
			list = append(list, h)
			cur = &list[len(list)-1]
			lastRemoved = false
		case cur == nil:
			// file header lines
		case strings.HasPrefix(l, "-"):
			cur.removed = append(cur.removed, l[1:])
			lastRemoved = true
		case strings.HasPrefix(l, "+"):
			lastRemoved = false
		case strings.HasPrefix(l, `\`):
			// "\ No newline at end of file" after a removed line: that
			// line had no ending.
			if lastRemoved && len(cur.removed) > 0 {
				n := len(cur.removed) - 1
				cur.removed[n] = strings.TrimSuffix(cur.removed[n], "\n")
			}
		}
	}
	return list, false, nil
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@".
func parseHunkHeader(l string) (hunk, error) {
	var h hunk
	f := strings.Fields(l)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return h, fmt.Errorf("changeset: bad hunk header %q", l)
	}
	var err error
	if h.oldStart, h.oldCount, err = parseSpan(f[1][1:]); err != nil {
		return h, err
	}
	if h.newStart, h.newCount, err = parseSpan(f[2][1:]); err != nil {
		return h, err
	}
	return h, nil
}

func parseSpan(s string) (start, count int, err error) {
	a, b, has := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, fmt.Errorf("changeset: bad hunk span %q", s)
	}
	count = 1
	if has {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("changeset: bad hunk span %q", s)
		}
	}
	return start, count, nil
}
