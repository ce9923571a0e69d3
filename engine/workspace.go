package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits past which a path is refused rather than handed to the kernel:
// ENAMETOOLONG and friends must deny, never half-succeed.
const (
	maxPathLen    = 4096
	maxNameLen    = 255
	maxSymlinkHop = 40
)

// Workspace is the directory tree a session may touch. Every file operation
// of the tools goes through it: paths are canonicalized, and files are opened
// relative to directory handles that were verified component by component, so
// a symlink swapped in after a check cannot redirect a write.
type Workspace struct {
	// Dir is the absolute workspace directory with symlinks resolved.
	Dir string
	// given is Dir as the caller spelled it (absolute), accepted as a prefix
	// of absolute paths too.
	given string
	root  *os.Root
	// rootF is the root directory itself, for system calls relative to it.
	rootF *os.File
	cache dirCache
	slots slots
	// written knows the hashes of the contents Edit wrote last.
	written writtenHashes
}

// OpenWorkspace opens dir as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	rootF, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	w := &Workspace{Dir: real, given: abs, root: root, rootF: rootF}
	w.CleanTemp()
	return w, nil
}

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error {
	w.closeSlots()
	w.cache.closeAll()
	w.rootF.Close()
	return w.root.Close()
}

// Abs returns the absolute OS path of canonical path rel, for messages and
// for tools that must hand a path to another program (a command's cwd).
func (w *Workspace) Abs(rel string) string {
	if rel == "" || rel == "." {
		return w.Dir
	}
	return filepath.Join(w.Dir, filepath.FromSlash(rel))
}

func escape(p, why string) error {
	return &Denial{Code: PathEscape, Path: p, Message: why,
		Hint: "use a workspace-relative path such as src/main.go that stays inside the workspace"}
}

func invalid(p, why string) error {
	return &Denial{Code: InvalidArgument, Path: p, Message: why,
		Hint: "send the path exactly as a workspace-relative path, e.g. src/main.go"}
}

// isInvisible reports code points that make two names look alike or reorder
// how they are displayed: zero-width characters, bidi controls, the BOM.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x206F,
		r == 0xFEFF, r == 0x00AD, r == 0x061C, r == 0x180E:
		return true
	}
	return false
}

// checkSyntax refuses inputs whose meaning depends on which layer reads them.
// Nothing is decoded or expanded: %2e, ~ and $HOME are literal names.
func checkSyntax(p string) error {
	switch {
	case p == "":
		return invalid(p, "the path is empty")
	case len(p) > maxPathLen:
		return invalid(p[:64]+"...", fmt.Sprintf("the path is longer than %d bytes", maxPathLen))
	case !utf8.ValidString(p):
		return invalid(p, "the path is not valid UTF-8")
	case strings.TrimSpace(p) != p:
		return invalid(p, "the path starts or ends with whitespace")
	}
	if n := len(p); n >= 2 && strings.ContainsRune("\"'`", rune(p[0])) && p[n-1] == p[0] {
		return invalid(p, "the path is wrapped in quotes")
	}
	for _, r := range p {
		switch {
		case r == 0:
			return invalid(p, "the path contains a NUL byte")
		case unicode.IsControl(r):
			return invalid(p, fmt.Sprintf("the path contains the control character %U", r))
		case isInvisible(r):
			return invalid(p, fmt.Sprintf("the path contains the invisible code point %U", r))
		}
	}
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)) {
		return invalid(p, "the path ends with a separator, so it names a directory, not a file")
	}
	// "file.go/." is a directory to the kernel (ENOTDIR) but would clean to
	// the file: refuse it like a trailing separator.
	if p == "." || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, string(filepath.Separator)+".") {
		return invalid(p, `the path ends with "/.", so it names a directory, not a file`)
	}
	return checkPlatformSyntax(p)
}

// Canonical turns an agent-supplied path into the canonical workspace-relative
// slash path that policies match and tools operate on: joined to the root,
// cleaned, every existing symlink resolved, and refused (PATH_ESCAPE) if it
// leaves the workspace at any step. A ".." segment is refused outright:
// whether "a/.." is "." depends on whether a is a symlink, and no glob should
// ever see one. Any error while deciding refuses.
func (w *Workspace) Canonical(p string) (string, error) {
	rel, _, err := w.canonical(p)
	return rel, err
}

// lookedUp is what resolving a path found of its last component, by the
// Lstat it made at the end: ok is false when it made none to reuse.
type lookedUp struct {
	fi  fs.FileInfo
	err error // nil or fs.ErrNotExist's
	ok  bool
}

// canonical is Canonical, also returning the Lstat of the path it made.
func (w *Workspace) canonical(p string) (string, lookedUp, error) {
	var lu lookedUp
	if err := checkSyntax(p); err != nil {
		return "", lu, err
	}
	rel := filepath.ToSlash(p)
	if filepath.IsAbs(p) || strings.HasPrefix(rel, "/") {
		r, ok := w.stripRoot(p)
		if !ok {
			return "", lu, escape(p, "the absolute path is outside the workspace "+w.Dir)
		}
		rel = r
	}
	var rest []string
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", lu, escape(p, `the path contains a ".." segment`)
		}
		if len(c) > maxNameLen {
			return "", lu, invalid(p, fmt.Sprintf("a path component is longer than %d bytes", maxNameLen))
		}
		rest = append(rest, c)
	}
	if len(rest) == 0 {
		return "", lu, invalid(p, "the path names the workspace root, not a file")
	}
	if rel, ok, err := w.resolveCached(p, rest, &lu); ok {
		return rel, lu, err
	}
	rel, err := w.resolve(p, rest)
	return rel, lookedUp{}, err
}

// resolveCached is resolve for a path whose directory is open in the cache
// and still what was opened: each of its components is then a plain
// directory (no symlink), so only the last component needs a look. ok is
// false when the cache cannot answer (no such directory open, or the last
// component is a symlink to follow). The last component's Lstat goes to lu.
func (w *Workspace) resolveCached(orig string, rest []string, lu *lookedUp) (string, bool, error) {
	if len(rest) < 2 {
		return "", false, nil
	}
	dir := strings.Join(rest[:len(rest)-1], "/")
	d := w.cachedDir(dir)
	if d == nil {
		return "", false, nil
	}
	defer w.releaseDir(d)
	fi, err := d.root.Lstat(rest[len(rest)-1])
	switch {
	case errors.Is(err, fs.ErrNotExist):
		*lu = lookedUp{err: err, ok: true}
	case err != nil:
		return "", true, lstatDenial(orig, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", false, nil
	default:
		*lu = lookedUp{fi: fi, ok: true}
	}
	return dir + "/" + rest[len(rest)-1], true, nil
}

func (w *Workspace) stripRoot(p string) (string, bool) {
	for _, dir := range []string{w.Dir, w.given} {
		if p == dir {
			return "", true
		}
		prefix := dir
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		if strings.HasPrefix(p, prefix) {
			return filepath.ToSlash(p[len(prefix):]), true
		}
	}
	return "", false
}

// resolve walks rest component by component from the root, following
// symlinks by hand so that each hop is checked against the root.
func (w *Workspace) resolve(orig string, rest []string) (string, error) {
	var done []string // resolved components: no symlinks, inside the root
	hops := 0
	exists := true
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			// Only symlink targets get here: done has no symlinks, so
			// popping it is exact.
			if len(done) == 0 {
				return "", escape(orig, "a symlink on the path points outside the workspace")
			}
			done = done[:len(done)-1]
			continue
		}
		next := strings.Join(append(done[:len(done):len(done)], c), "/")
		if !exists {
			done = append(done, c)
			continue
		}
		fi, err := w.root.Lstat(filepath.FromSlash(next))
		if errors.Is(err, fs.ErrNotExist) {
			exists = false
			done = append(done, c)
			continue
		}
		if err != nil {
			return "", lstatDenial(orig, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			hops++
			if hops > maxSymlinkHop {
				return "", escape(orig, "too many levels of symbolic links (a loop or a long chain)")
			}
			target, err := w.root.Readlink(filepath.FromSlash(next))
			if err != nil {
				return "", escape(orig, "cannot read the symlink "+next+": "+err.Error())
			}
			if filepath.IsAbs(target) || strings.HasPrefix(filepath.ToSlash(target), "/") {
				r, ok := w.stripRoot(filepath.Clean(target))
				if !ok {
					return "", escape(orig, fmt.Sprintf("the symlink %s points outside the workspace (%s)", next, target))
				}
				done = done[:0]
				target = r
			}
			rest = append(strings.Split(filepath.ToSlash(target), "/"), rest...)
			continue
		}
		if len(rest) > 0 && !fi.IsDir() {
			return "", invalid(orig, next+" is not a directory")
		}
		done = append(done, c)
	}
	if len(done) == 0 {
		return "", invalid(orig, "the path resolves to the workspace root, not a file")
	}
	return strings.Join(done, "/"), nil
}

func lstatDenial(p string, err error) error {
	if isIOError(err) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return escape(p, "cannot check the path safely: "+err.Error())
}

// isIOError reports the errors that say the disk or the file system failed
// (EIO, ENOSPC, EDQUOT, EROFS): they are reported as what they are, never as
// a path escaping the workspace.
func isIOError(err error) bool {
	for _, e := range ioErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Stat describes canonical path rel without following a final symlink.
// It returns fs.ErrNotExist for a missing file. Any other failure means a
// component was swapped since rel was canonicalized (PATH_ESCAPE).
func (w *Workspace) Stat(rel string) (fs.FileInfo, error) {
	if dir, name := splitRel(rel); dir != "" {
		if d := w.cachedDir(dir); d != nil {
			defer w.releaseDir(d)
			fi, err := d.root.Lstat(name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, lstatDenial(rel, err)
			}
			return fi, err
		}
	}
	fi, err := w.root.Lstat(filepath.FromSlash(rel))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, lstatDenial(rel, err)
	}
	return fi, err
}

// swapped turns the failure to open something just checked into a
// PATH_ESCAPE denial, unless it is simply gone (fs.ErrNotExist) or the
// process may not open it (permissions, resource limits), which stay as
// they are.
func swapped(p, why string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscallEMFILE) || errors.Is(err, syscallENFILE) || isIOError(err) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return escape(p, why+": "+err.Error())
}

// openDir opens the directory dir (canonical, "" for the root) through handles
// verified one component at a time: each component must be a real directory
// (not a symlink), and the handle opened must be the directory that was
// checked. With create, missing directories are made.
func (w *Workspace) openDir(dir string, create bool) (*os.Root, error) {
	return w.walkDir(dir, create, nil)
}

// walkDir is openDir telling seen what each component was.
func (w *Workspace) walkDir(dir string, create bool, seen func(fs.FileInfo)) (*os.Root, error) {
	cur, err := w.root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return cur, nil
	}
	for _, c := range strings.Split(dir, "/") {
		fi, err := cur.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = cur.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				cur.Close()
				return nil, err
			}
			fi, err = cur.Lstat(c)
		}
		if err != nil {
			cur.Close()
			return nil, err
		}
		if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
			cur.Close()
			return nil, escape(dir, c+" on the path is not a plain directory (a symlink or file was swapped in)")
		}
		next, err := cur.OpenRoot(c)
		cur.Close()
		if err != nil {
			// c was a plain directory a moment ago: failing to open it
			// now (os.Root refusing a symlink swapped in, ELOOP,
			// ENOTDIR) means it was swapped. Say so as what it is.
			return nil, swapped(dir, c+" changed while it was being opened", err)
		}
		got, err := next.Stat(".")
		if err != nil || !os.SameFile(fi, got) {
			next.Close()
			return nil, escape(dir, c+" changed while it was being opened")
		}
		if seen != nil {
			seen(fi)
		}
		cur = next
	}
	return cur, nil
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// checkRegular refuses anything but a plain file with a single link: special
// files (a FIFO would hang a read, a device is not source code) and hard links
// (the other name may be outside the workspace or the scope).
func checkRegular(rel string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		return escape(rel, "the file is a symbolic link")
	case m.IsDir():
		return invalid(rel, "the path is a directory, not a file")
	case !m.IsRegular():
		return escape(rel, fmt.Sprintf("the file is a special file (%s), not a regular file", m.Type()))
	}
	if n := linkCount(fi); n > 1 {
		return escape(rel, fmt.Sprintf("the file has %d hard links; another name for it may be outside the workspace or the scope", n))
	}
	return nil
}

// readIn reads name in dir, refusing anything but a regular single-link file.
// The open does not follow symlinks and does not block on a FIFO swapped in
// after the Lstat; the opened file must be the one that was checked.
func readIn(dir *os.Root, rel, name string) ([]byte, fs.FileInfo, error) {
	// Another session's atomic replace between the Lstat and the open looks
	// like a swap; every attempt runs all the checks again, so retrying a
	// few times is safe and lets honest concurrent writers through.
	for attempt := 1; ; attempt++ {
		b, fi, err := readOnce(dir, rel, name)
		if errors.Is(err, errReplaced) {
			if attempt < 5 {
				continue
			}
			return nil, nil, escape(rel, "the file was replaced while it was being opened")
		}
		return b, fi, err
	}
}

var errReplaced = errors.New("replaced while opening")

func readOnce(dir *os.Root, rel, name string) ([]byte, fs.FileInfo, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRegular(rel, fi); err != nil {
		return nil, nil, err
	}
	f, err := dir.OpenFile(name, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, nil, swapped(rel, "the file was replaced while it was being opened", err)
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !os.SameFile(fi, got) {
		return nil, nil, errReplaced
	}
	if !got.Mode().IsRegular() {
		return nil, nil, escape(rel, "the file was replaced while it was being opened")
	}
	if n := openedLinks(f, got); n > 1 {
		return nil, nil, escape(rel, fmt.Sprintf("the file has %d hard links; another name for it may be outside the workspace or the scope", n))
	}
	b, err := readSized(f, got.Size())
	if err != nil {
		return nil, nil, err
	}
	return b, fi, nil
}

// readSized reads f to its end in one read when it still has the size its
// stat gave (one more byte of room tells the end), growing like
// io.ReadAll only if the file grew meanwhile.
func readSized(f io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 1<<30 {
		return io.ReadAll(f)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grew: room for more
		}
	}
}

// ReadFile reads canonical path rel safely.
func (w *Workspace) ReadFile(rel string) ([]byte, error) {
	d, name := splitRel(rel)
	dir, err := w.acquireDir(d, false)
	if err != nil {
		return nil, err
	}
	defer w.releaseDir(dir)
	b, _, err := readIn(dir.root, rel, name)
	return b, err
}

// Hash is the lowercase hex SHA-256 of b: the hash lock's unit.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// LockFile takes the per-file lock for canonical path rel, shared by every
// process governing this workspace.
func (w *Workspace) LockFile(rel string) (*FileLock, error) {
	sum := sha256.Sum256([]byte(rel))
	return w.lockIn(hex.EncodeToString(sum[:12]) + ".lock")
}

// LocksDir holds the per-file lock files, relative to the workspace.
const LocksDir = ".orchestration/locks"

// Edit replaces canonical path rel with what fn makes of its current content,
// under the per-file lock. Right before the atomic rename it re-checks c's
// precondition for rel (the hash lock): if the file no longer has the content
// the session saw, nothing is written and a STALE_FILE denial is returned.
// fn receives nil and false for a file that does not exist yet.
func (w *Workspace) Edit(c *Call, rel string, fn func(before []byte, existed bool) ([]byte, error)) (FileChange, error) {
	ch := FileChange{Path: rel}
	lock, err := w.LockFile(rel)
	if err != nil {
		return ch, err
	}
	defer lock.Release()

	d, name := splitRel(rel)
	dref, err := w.acquireDir(d, true)
	if err != nil {
		return ch, err
	}
	held := true
	defer func() {
		if held {
			w.releaseDir(dref)
		}
	}()
	dir := dref.root

	perm := fs.FileMode(0o644)
	before, fi, err := readIn(dir, rel, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return ch, err
	default:
		ch.Existed = true
		ch.Before = before
		ch.BeforeSHA256 = w.written.hashOf(rel, before)
		perm = fi.Mode().Perm()
	}
	// The hash lock, checked on the content read under the lock (the
	// pre-hook leaves it here when the tool runs right after it), before
	// the tool makes anything of a content the session has not seen.
	if want, ok := c.Expect[rel]; ok {
		actual := ""
		if ch.Existed {
			actual = ch.BeforeHash()
		}
		if actual != want {
			return ch, staleDenial(c, rel, want, actual)
		}
	}
	after, err := fn(before, ch.Existed)
	if err != nil {
		return ch, err
	}
	ch.After = after
	ch.AfterSHA256 = Hash(after)

	// The new content is written beside the ledger, in .orchestration/tmp,
	// never in the user's tree: a crash leaves nothing there, and the next
	// open clears what it left. A directory on another file system (a
	// mount inside the workspace) gets the temp file beside the target.
	tmpDir, err := w.acquireDir(TempDir, true)
	if err != nil {
		return ch, err
	}
	defer w.releaseDir(tmpDir)
	// The change is journaled before it happens, so that a crash between
	// the rename and the ledger record leaves a trace of it. The entry (in
	// this process's journal slot) and the new content are both written
	// first and then synced at the same time (syncTogether), so the write
	// waits for the disk once, not twice. An entry whose rename never
	// happened is dropped on recovery.
	js, err := w.journalWrite(c, &ch)
	if err != nil {
		return ch, err
	}
	tmp, tf, err := writeTemp(tmpDir, name, after, perm)
	if err != nil {
		w.journalAbort(c, rel)
		return ch, err
	}
	if err = syncTogether(tf, js.f); err != nil {
		tmpDir.root.Remove(tmp)
		// A slot whose sync failed is not trusted with another entry.
		w.journalAbort(c, rel)
		w.dropSlot(js)
		return ch, err
	}
	// The hash lock's second look, as late as possible: the temp file is
	// ready, only the rename remains.
	if err := checkExpect(c, dir, rel, name, fi); err != nil {
		tmpDir.root.Remove(tmp)
		w.journalAbort(c, rel)
		return ch, err
	}
	CrashPoint("crash-before-rename")
	err = renameAt(tmpDir, tmp, dref, name)
	if errors.Is(err, errCrossDevice) {
		tmpDir.root.Remove(tmp)
		if tmp, err = writeTempSynced(dref, name, after, perm); err != nil {
			w.journalAbort(c, rel)
			return ch, err
		}
		if err = dir.Rename(tmp, name); err != nil {
			dir.Remove(tmp)
		}
	} else if err != nil {
		tmpDir.root.Remove(tmp)
	}
	if err != nil {
		w.journalAbort(c, rel)
		return ch, err
	}
	CrashPoint("crash-after-rename")
	w.written.keep(rel, after, ch.AfterSHA256)
	// Under Dispatch the directory's fsync waits for the ledger's, to run
	// with it (Call.SyncPending): the journal entry, durable before the
	// rename, covers a crash in between. The call keeps the directory
	// until then.
	held = false
	if err := c.syncLater(dref.f, func() { w.releaseDir(dref) }); err != nil {
		return ch, err
	}
	return ch, nil
}

// syncTogether syncs the new content f and the journal slot js at the same
// time and closes f (the slot stays open): f's fsync goes to the kernel
// (StartSync) while this thread syncs the slot's data (datasync: the slot
// is rewritten in place, so its times are all its inode would add, and it
// needs no journal commit of its own). No writeback is started before the
// fsync: with one file to commit, it only split the same writes into more
// requests to the disk (per 1,000 writes, 5,100 block requests with it,
// 4,400 without).
func syncTogether(f, js *os.File) error {
	s := StartSync(f)
	ej := datasync(js)
	ef := s.Wait()[0]
	if err := f.Close(); ef == nil {
		ef = err
	}
	if ej != nil {
		return ej
	}
	return ef
}

// selfPid is this process's id (os.Getpid is a system call each time).
var selfPid = os.Getpid()

// TempDir is where the workspace's temporary files live, relative to it.
const TempDir = ".orchestration/tmp"

// CleanTemp removes the temporary files that processes which are gone left
// in TempDir (a crash between writing the new content and the rename). It is
// called when a workspace is opened; failing to clean is not an error.
func (w *Workspace) CleanTemp() {
	dir, err := w.openDir(TempDir, false)
	if err != nil {
		return
	}
	defer dir.Close()
	f, err := dir.Open(".")
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		if tempAbandoned(dir, n) {
			dir.Remove(n)
		}
	}
}

// checkExpect looks at rel again right before the rename: read under the
// lock as seen (nil for a file that did not exist), it must still be the
// same version, or still hash to what the call expects.
func checkExpect(c *Call, dir *os.Root, rel, name string, seen fs.FileInfo) error {
	want, ok := c.Expect[rel]
	if !ok {
		return nil
	}
	if seen != nil {
		if fi, err := dir.Lstat(name); err == nil && sameVersion(seen, fi) {
			return nil
		}
	}
	cur, _, err := readIn(dir, rel, name)
	actual := ""
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		actual = Hash(cur)
	}
	if actual == want {
		return nil
	}
	return staleDenial(c, rel, want, actual)
}

// staleDenial refuses a change of rel whose content is not the one the call
// expects (want, "" for none) but actual ("" for no file).
func staleDenial(c *Call, rel, want, actual string) error {
	d := &Denial{Code: StaleFile, Tool: c.Tool, Path: rel, Intent: c.Intent,
		ExpectedSHA256: want, ActualSHA256: actual,
		Message: rel + " changed since this session last read it",
		Hint:    "read the file again with read_file, then redo your change on the current content"}
	switch {
	case want == "":
		// The session has not read what someone else created: its hash
		// is not the session's to learn from a refusal.
		d.ActualSHA256 = ""
		d.Message = rel + " was created by someone else since this session checked it"
	case actual == "":
		d.Message = rel + " was deleted since this session last read it"
	}
	return d
}

// writeTemp writes data to a new temp file for name in dir and returns its
// name and the file, open and not synced yet (syncTogether syncs it).
func writeTemp(dir *dirRef, name string, data []byte, perm fs.FileMode) (string, *os.File, error) {
	var rnd [6]byte
	if _, err := readRandom(rnd[:]); err != nil {
		return "", nil, err
	}
	// The process id lets CleanTemp tell an abandoned file from one a live
	// process is about to rename.
	tmp := "." + name + ".intentgate-" + strconv.Itoa(selfPid) + "-" + hex.EncodeToString(rnd[:])
	if len(tmp) > maxNameLen {
		tmp = ".intentgate-" + strconv.Itoa(selfPid) + "-" + hex.EncodeToString(rnd[:])
	}
	f, err := createIn(dir, tmp, perm, true)
	if err != nil {
		return "", nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err != nil {
		f.Close()
		dir.root.Remove(tmp)
		return "", nil, err
	}
	return tmp, f, nil
}

// writeTempSynced is writeTemp with the file synced and closed.
func writeTempSynced(dir *dirRef, name string, data []byte, perm fs.FileMode) (string, error) {
	tmp, f, err := writeTemp(dir, name, data, perm)
	if err != nil {
		return "", err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}
