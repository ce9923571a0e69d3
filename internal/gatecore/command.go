package gatecore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/sandbox"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/tools/picture"
)

// A shell command cannot be judged before it runs, so it is judged by what
// it changed: the workspace is pictured before it (Picture) and compared
// after it (picture.Changes). Whether intentgate ran the command (Dispatch) or
// an external agent did (its pre-tool event takes the picture, its post-tool
// event calls ObserveCommand), the changes then take the same path through
// settle: judged against the session's intent, restored when
// .orchestration/config.yaml says on_violation: revert, explained to the
// model in one text, and recorded in the ledger with the command.

// ObserveCommand records what a command an external agent ran changed since
// the picture before. The result's Output is what the model must be told
// ("" when the command stayed within its intent's scope); a non-nil error
// says what could not be judged or recorded. output is what the command
// printed as the agent reported it ("" when it does not): the writes the
// sandbox refused it are read from there and recorded.
func (rt *Runtime) ObserveCommand(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, output string) (*engine.Result, error) {
	return rt.observeCommand(ctx, c, before, output)
}

// keptRunning marks the context of the judgement of a command the person
// let keep running (observeKeptRunning).
type keptRunning struct{}

// observeKeptRunning judges, once it ended, a command of intentgate's own
// agent that the person let keep running while the agent went on: the same
// judgement as ObserveCommand, except that the changes the session's own
// tools made meanwhile are told apart from the command's as another
// session's are (they are recorded in the ledger and the journal), and
// that the call, counted when it returned, is not counted again. The
// result's Output holds everything the model is told.
func (rt *Runtime) observeKeptRunning(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, output string) (*engine.Result, error) {
	// It counts as running until its changes are in the ledger, where
	// the judgements of other commands find them.
	defer rt.kept.remove(c.ID)
	r, err := rt.observeCommand(context.WithValue(ctx, keptRunning{}, true), c, before, output)
	if r != nil {
		if note, _ := r.Data[NoteKey].(string); note != "" {
			if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
				r.Output += "\n"
			}
			r.Output += note
		}
	}
	return r, err
}

func (rt *Runtime) observeCommand(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, output string) (*engine.Result, error) {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return nil, err
	}
	defer release()
	rt.prepare(c)
	changes, err := picture.Changes(rt.ws.Dir, before)
	if err != nil {
		return nil, fmt.Errorf("the workspace cannot be pictured after the command: %w", err)
	}
	r := &engine.Result{Changes: changes}
	if refused := sandbox.Refusals(output); len(refused) > 0 {
		r.Data = map[string]any{"refused_writes": refused}
	}
	if ctx.Value(keptRunning{}) != nil {
		if r.Data == nil {
			r.Data = map[string]any{}
		}
		r.Data[hooks.KeptRunningKey] = true
	}
	if len(changes) == 0 {
		// Empty governance directories the command made are not
		// changes of a file, and are still taken away.
		return r, errors.Join(rt.sweep(before, r), rt.recordRefusals(ctx, c, r))
	}
	note, serr := rt.settleNote(ctx, c, before, r)
	if note != "" {
		if r.Data == nil {
			r.Data = map[string]any{}
		}
		r.Data[NoteKey] = note
	}
	return r, errors.Join(serr, rt.eng.Observe(ctx, c, r))
}

// NoteKey is the key of ObserveCommand's result Data holding what the model
// may be told besides its Output (which asks for something to be done): the
// changes of other sessions left out of the command's, and those recorded as
// ambiguous. A string; absent when there is nothing to say.
const NoteKey = "note"

// settle judges a command's changes, applies on_violation and tells the
// model; then it takes away the governance directories the command created
// (a mount cannot cover a path that does not exist yet, so under a scope of
// ** a command can create .codex/, .claude/, .mcp.json...: their files are
// violations restored above, the directories left empty go here). It runs
// before the post-hooks, so the ledger records the changes as judged here.
func (rt *Runtime) settle(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, r *engine.Result) error {
	note, err := rt.settleNote(ctx, c, before, r)
	if note != "" {
		if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
			r.Output += "\n"
		}
		r.Output += note
	}
	return err
}

// settleNote is settle, returning apart what the model is told about other
// sessions' changes during the command (rt.concurrent).
func (rt *Runtime) settleNote(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, r *engine.Result) (string, error) {
	note, err := rt.judge(ctx, c, before, r)
	return note, errors.Join(err, rt.sweep(before, r), rt.recordRefusals(ctx, c, r))
}

// recordRefusals records in the ledger each write the sandbox refused the
// command (data.refused_writes, the lines of its output that say so), as a
// refusal: PROTECTED_PATH for a governance path (or a read-only file
// system), SCOPE_VIOLATION otherwise. The path is the one the line names, when it
// names one in the workspace; the lines are the command's own words, so
// the records are evidence of what it said, never a decision.
func (rt *Runtime) recordRefusals(ctx context.Context, c *engine.Call, r *engine.Result) error {
	lines, _ := r.Data["refused_writes"].([]string)
	if len(lines) == 0 || rt.trace == nil {
		return nil
	}
	cwd := rt.ws.Dir
	if d, ok, _ := c.String("cwd"); ok && d != "" {
		if filepath.IsAbs(d) {
			cwd = d
		} else {
			cwd = filepath.Join(rt.ws.Dir, d)
		}
	}
	var errs []error
	for _, line := range lines {
		rel := refusedRel(rt.ws.Dir, cwd, sandbox.RefusedPath(line))
		code := engine.ScopeViolation
		if strings.Contains(line, "Read-only file system") || (rel != "" && orchestration.IsGoverned(rel)) {
			code = engine.ProtectedPath
		}
		if len(line) > 500 {
			line = strings.ToValidUTF8(line[:500], "") + "..."
		}
		d := &engine.Denial{Code: code, Tool: c.Tool, Intent: c.Intent, Path: rel,
			Message: "the sandbox refused a write the command attempted; the command said: " + strings.ToValidUTF8(line, "\uFFFD")}
		if err := rt.trace.Denied(ctx, c, d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("recording the writes the sandbox refused: %w", err)
	}
	return nil
}

// refusedRel is p (as a command in cwd named it) relative to the workspace
// ws, or "" when it is not in the workspace or no path was told.
func refusedRel(ws, cwd, p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	rel, err := filepath.Rel(ws, filepath.Clean(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// sweep removes the governance directories at the top of the workspace, and
// the governance directories left empty by a restore, that did not exist in
// the picture before the command, as long as they hold no file: a file in
// them is a change, judged and restored by settle. It tells the model what
// it removed.
func (rt *Runtime) sweep(before *picture.StoredSnapshot, r *engine.Result) error {
	removed, err := sweepGovernance(rt.ws.Dir, before, r.Changes)
	if len(removed) > 0 {
		if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
			r.Output += "\n"
		}
		r.Output += "intentgate removed the governance directories the command created: " + strings.Join(removed, ", ") + ". Do not create them; ask a person to.\n"
		if r.Data == nil {
			r.Data = map[string]any{}
		}
		r.Data["removed_governance"] = removed
	}
	if err != nil {
		return fmt.Errorf("governance directories the command created: %w", err)
	}
	return nil
}

// sweepGovernance is sweep's work; it returns the workspace-relative paths
// it removed.
func sweepGovernance(dir string, before *picture.StoredSnapshot, changes []engine.FileChange) ([]string, error) {
	existed := func(rel string) bool {
		if _, ok := before.Files[rel]; ok {
			return true
		}
		for k := range before.Files {
			if strings.HasPrefix(k, rel+"/") {
				return true
			}
		}
		return false
	}
	cands := append([]string{}, sandbox.GovernanceNames...)
	// The outermost governance directory of each governance file the
	// command created (src/x/.orchestration for
	// src/x/.orchestration/active_intents.yaml): never one of its inner
	// directories, which may have been there, empty, before.
	for _, ch := range changes {
		if ch.Existed || !orchestration.IsGoverned(ch.Path) {
			continue
		}
		parts := strings.Split(ch.Path, "/")
		for i := 1; i < len(parts); i++ {
			if p := strings.Join(parts[:i], "/"); orchestration.IsGoverned(p) {
				cands = append(cands, p)
				break
			}
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var removed []string
	var errs []error
	seen := map[string]bool{}
	for _, rel := range cands {
		if seen[rel] || existed(rel) {
			continue
		}
		seen[rel] = true
		fi, err := root.Lstat(filepath.FromSlash(rel))
		if err != nil || !fi.IsDir() {
			continue // gone, or a file or link: a change settle judged
		}
		if !onlyDirs(root, filepath.FromSlash(rel)) {
			continue
		}
		if err := root.RemoveAll(filepath.FromSlash(rel)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel, err))
			continue
		}
		removed = append(removed, rel)
	}
	sort.Strings(removed)
	return removed, errors.Join(errs...)
}

// onlyDirs reports whether the directory rel holds directories only, at
// every depth (the walk stays beneath root).
func onlyDirs(root *os.Root, rel string) bool {
	ok := true
	err := fs.WalkDir(root.FS(), filepath.ToSlash(rel), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return ok && err == nil
}

// judge is settle's judgement of the changes; it returns apart what the
// model is told about other sessions' changes during the command.
func (rt *Runtime) judge(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, r *engine.Result) (string, error) {
	self := c.Session
	if ctx.Value(keptRunning{}) != nil {
		// The session went on while its command ran: its own tools'
		// changes since the picture are not the command's.
		self = ""
	}
	note, cerr := rt.concurrent(c, self, before, r)
	note += rt.kept.overlap(c, r)
	if rt.audit == nil || len(r.Changes) == 0 || rt.audit.Judge(c, r.Changes) == 0 {
		return note, cerr
	}
	var bad []engine.FileChange
	var paths []string
	for _, ch := range r.Changes {
		if ch.Violation {
			bad = append(bad, ch)
			paths = append(paths, ch.Path)
		}
	}
	cfg, cfgErr := rt.stores.Config.Load()
	revert := cfg.OnViolation == orchestration.ViolationRevert
	// The files that govern the agent are restored whatever on_violation
	// says: a command must not change its own rules.
	var undo []engine.FileChange
	for _, ch := range bad {
		if revert || orchestration.IsGoverned(ch.Path) {
			undo = append(undo, ch)
		}
	}
	restored := restore(rt.ws.Dir, before, undo)
	var b strings.Builder
	fmt.Fprintf(&b, "SCOPE_VIOLATION: the command changed %d file(s) it was not allowed to change; intentgate recorded this in the ledger as a violation:\n", len(bad))
	var errs []error
	for _, ch := range bad {
		note := ""
		if err, tried := restored[ch.Path]; tried && err != nil {
			note = " (NOT restored: " + err.Error() + ")"
			errs = append(errs, fmt.Errorf("cannot restore %s: %w", ch.Path, err))
		} else if tried {
			note = " (restored)"
		}
		fmt.Fprintf(&b, "  %s: %s%s\n", ch.Path, ch.Reason, note)
	}
	switch {
	case revert:
		b.WriteString("intentgate restored these files to their state before the command (on_violation: revert). Do not make these changes again; if they are needed, ask for the intent's scope to be widened.")
	case len(undo) > 0 && len(undo) == len(bad):
		b.WriteString("intentgate restored these governance files to their state before the command. Do not change them; ask a person to.")
	case len(undo) > 0:
		b.WriteString("intentgate restored the governance files to their state before the command. Undo the other changes, or ask for the intent's scope to be widened.")
	default:
		b.WriteString("Undo these changes, or ask for the intent's scope to be widened.")
	}
	if cfgErr != nil {
		errs = append(errs, fmt.Errorf("%w; violations are reported, not reverted", cfgErr))
	}
	errs = append(errs, cerr)
	if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
		r.Output += "\n"
	}
	r.Output += b.String()
	if r.Data == nil {
		r.Data = map[string]any{}
	}
	r.Data["violations"] = paths
	if revert {
		r.Data["on_violation"] = string(orchestration.ViolationRevert)
	}
	return note, errors.Join(errs...)
}

// restore puts the files a command changed against the rules back to their
// state in the picture, through an os.Root so that no link the command left
// can redirect the restore. It returns, per path, why a file could not be
// restored (nil when it was).
func restore(dir string, st *picture.StoredSnapshot, bad []engine.FileChange) map[string]error {
	out := map[string]error{}
	root, err := os.OpenRoot(dir)
	if err != nil {
		for _, ch := range bad {
			out[ch.Path] = err
		}
		return out
	}
	defer root.Close()
	for _, ch := range bad {
		p := filepath.FromSlash(ch.Path)
		f, had := st.Files[ch.Path]
		var err error
		switch {
		case ch.Uninspected:
			err = errors.New("it cannot be inspected")
		case !ch.Existed:
			err = root.Remove(p)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case had && f.Link != "":
			if err = removeIfThere(root, p); err == nil {
				err = root.Symlink(f.Link, p)
			}
		case had && f.Kept:
			err = restoreFile(root, p, f.Content, f.Mode.Perm())
		default:
			err = errors.New("its old content was not kept")
		}
		out[ch.Path] = err
	}
	return out
}

func removeIfThere(root *os.Root, p string) error {
	if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func restoreFile(root *os.Root, p string, content []byte, perm fs.FileMode) error {
	if dir := filepath.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := removeIfThere(root, p); err != nil {
		return err
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// keptCommands are the commands left running in the workspace, by call id:
// until one is judged, nothing says which files it changed, so the changes
// of any other command judged meanwhile may be its.
type keptCommands struct {
	mu sync.Mutex
	m  map[string]string // call id -> command line
}

// keptRunning notes that c's command keeps running after its call.
func (rt *Runtime) keptRunning(c *engine.Call) {
	k := &rt.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]string{}
	}
	command, _, _ := c.String("command")
	k.m[c.ID] = command
}

func (k *keptCommands) remove(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, id)
}

// overlap marks as ambiguous the changes of c's command that a command left
// running (another one) may have made, and says so.
func (k *keptCommands) overlap(c *engine.Call, r *engine.Result) string {
	k.mu.Lock()
	var others []string
	for id, command := range k.m {
		if id != c.ID {
			others = append(others, "`"+command+"`")
		}
	}
	k.mu.Unlock()
	if len(others) == 0 || len(r.Changes) == 0 {
		return ""
	}
	sort.Strings(others)
	var paths []string
	for i := range r.Changes {
		ch := &r.Changes[i]
		if ch.Uninspected || strings.HasPrefix(ch.Reason, hooks.AmbiguousReason) {
			continue
		}
		ch.Reason = hooks.AmbiguousReason + "a command left running was running too: " + strings.Join(others, ", ")
		paths = append(paths, ch.Path)
	}
	if len(paths) == 0 {
		return ""
	}
	if r.Data == nil {
		r.Data = map[string]any{}
	}
	amb, _ := r.Data["ambiguous"].([]string)
	r.Data["ambiguous"] = append(amb, paths...)
	return fmt.Sprintf("Changed while a command left running was running too (%s); intentgate cannot tell which changed them and recorded them as ambiguous: %s\n", strings.Join(others, ", "), strings.Join(paths, ", "))
}
