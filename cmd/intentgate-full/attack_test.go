//go:build linux

// The attack corpus (shared/security/attack-corpus.md) through the real
// dispatch path: the intentgate binary is built once, and every case runs it
// as a process on a fresh temporary workspace, sends JSONL calls and checks
// the decoded answers. A denial must carry the right code, and, what matters
// more, nothing outside the workspace (or outside the scope) may have been
// created, changed or read: the tests compare the directory trees around the
// workspace before and after each case and look for the secret in every byte
// the process wrote.
//
// Subtests are named after the corpus item: "NN/<input>".
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
	"golang.org/x/sys/unix"
)

// atkBin is the intentgate binary TestMain built.
var atkBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "intentgate-attack-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Anchors (the workspace key, the last seal) go to a directory of the
	// tests' own, inherited by every binary they run.
	os.Setenv(orchestration.AnchorDirEnv, filepath.Join(dir, "anchors"))
	atkBin = filepath.Join(dir, "intentgate")
	// A fuzzing run (and each of its workers, which run TestMain too)
	// drives no binary: building one per process would cost more than the
	// fuzzing itself.
	flag.Parse()
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return m.Run()
		}
	}
	if _, err := buildInstall(dir); err != nil {
		fmt.Fprintf(os.Stderr, "building intentgate: %v\n", err)
		return 1
	}
	prebuilt = atkBin
	return m.Run()
}

// Pseudo codes for what a case expects besides a denial.
const (
	atkAllow   engine.Code = "ALLOW"      // ok:true
	atkToolErr engine.Code = "TOOL_ERROR" // ok:false with "error": the tool failed (e.g. no such file)
)

// atkHangGuard bounds one dispatch process. It is not a timing assertion: it
// turns a hang (a FIFO read, say) into a failure instead of a stuck test.
const atkHangGuard = 90 * time.Second

const atkNFC = "caf\u00e9"  // café, precomposed
const atkNFD = "cafe\u0301" // café, e + combining acute

// atkIntents declares the intents the cases select.
var atkIntents = `active_intents:
  - id: INT-001
    name: scoped to src
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-ALL
    name: everything
    status: IN_PROGRESS
    owned_scope: ["**"]
  - id: INT-CAFE
    name: NFC glob
    status: IN_PROGRESS
    owned_scope: ["src/` + atkNFC + `/**"]
  - id: INT-CAFE-NFD
    name: NFD glob
    status: IN_PROGRESS
    owned_scope: ["src/` + atkNFD + `/**"]
`

// atkEnv is one case's world: a workspace and, around it, the things an attack
// would reach for (an outside directory with a secret, a sibling directory
// whose name extends the workspace's, a home directory).
type atkEnv struct {
	t       *testing.T
	root    string // holds everything below
	ws      string // the workspace as passed to dispatch
	wsReal  string // the workspace directory itself
	out     string // outside: secret.txt, dir/authorized_keys
	evil    string // ws + "-evil": the sibling-prefix directory
	home    string // HOME of the dispatch process
	secret  string // content of out/secret.txt
	secret2 string // content of out/dir/authorized_keys and home/.ssh/id_rsa
	git     bool

	around map[string]string // the tree around the workspace, at baseline
}

type atkOpts struct {
	intents string // content of active_intents.yaml; "" is atkIntents
	noYAML  bool   // no active_intents.yaml at all
	viaLink bool   // pass the workspace to dispatch through a symlink
	noGit   bool
}

func atkRandHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newAtkEnv(t *testing.T, o atkOpts) *atkEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &atkEnv{t: t, root: root,
		wsReal:  filepath.Join(root, "ws"),
		out:     filepath.Join(root, "outside"),
		home:    filepath.Join(root, "home"),
		secret:  "IG-SECRET-" + atkRandHex(),
		secret2: "IG-KEY-" + atkRandHex(),
	}
	e.ws = e.wsReal
	e.evil = e.wsReal + "-evil"
	e.mkdir(e.out + "/dir")
	e.mkdir(e.evil)
	e.mkdir(e.home + "/.ssh")
	e.writeAbs(e.out+"/secret.txt", e.secret+"\n")
	e.writeAbs(e.out+"/dir/authorized_keys", e.secret2+"\n")
	e.writeAbs(e.evil+"/x", "evil-original\n")
	e.writeAbs(e.home+"/.ssh/id_rsa", e.secret2+"\n")

	e.mkdir(e.wsReal + "/src")
	e.mkdir(e.wsReal + "/docs")
	e.mkdir(e.wsReal + "/.orchestration")
	e.write("src/main.go", "package main\n\nfunc main() {}\n")
	e.write("docs/readme.md", "hello world\n")
	e.write(".gitignore", ".orchestration/sessions/\n.orchestration/locks/\n")
	if !o.noYAML {
		y := o.intents
		if y == "" {
			y = atkIntents
		}
		e.write(".orchestration/active_intents.yaml", y)
	}
	if !o.noGit {
		if _, err := exec.LookPath("git"); err == nil {
			e.gitRun("init", "-q", ".")
			e.git = true
		}
	}
	if o.viaLink {
		link := filepath.Join(root, "wslink")
		if err := os.Symlink(e.wsReal, link); err != nil {
			t.Fatal(err)
		}
		e.ws = link
	}
	return e
}

func (e *atkEnv) gitEnv() []string {
	vars := []string{"HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "GIT_") {
			continue
		}
		vars = append(vars, kv)
	}
	return vars
}

func (e *atkEnv) gitRun(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = e.wsReal
	cmd.Env = e.gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (e *atkEnv) mkdir(abs string) {
	e.t.Helper()
	if err := os.MkdirAll(abs, 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func (e *atkEnv) writeAbs(abs, content string) {
	e.t.Helper()
	e.mkdir(filepath.Dir(abs))
	if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// write creates a workspace file, as a person would (not through intentgate).
func (e *atkEnv) write(rel, content string) { e.writeAbs(e.abs(rel), content) }

func (e *atkEnv) abs(rel string) string { return filepath.Join(e.wsReal, filepath.FromSlash(rel)) }

func (e *atkEnv) symlink(target, rel string) {
	e.t.Helper()
	e.mkdir(filepath.Dir(e.abs(rel)))
	if err := os.Symlink(e.expand(target), e.abs(rel)); err != nil {
		e.t.Fatal(err)
	}
}

// expand fills in the placeholders {ws}, {wsreal}, {out}, {evil}, {home},
// {root}.
func (e *atkEnv) expand(s string) string {
	return strings.NewReplacer("{ws}", e.ws, "{wsreal}", e.wsReal, "{out}", e.out, "{evil}", e.evil,
		"{home}", e.home, "{root}", e.root).Replace(s)
}

// ---- trees ----

// atkTree describes every entry below a directory, without following symlinks
// and without opening anything but regular files: "d", "f:<content>",
// "l:<target>", or "t:<type>" for special files. It goes through an os.Root
// so paths longer than PATH_MAX are walked too.
func atkTree(t *testing.T, dir string, skip func(rel string) bool) map[string]string {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fsys := r.FS()
	m := map[string]string{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if p == "." {
			return err
		}
		if skip != nil && skip(p) {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil {
			m[p] = "err:" + err.Error()
			return nil
		}
		switch typ := d.Type(); {
		case typ.IsDir():
			m[p] = "d"
		case typ&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				target = "err:" + err.Error()
			}
			m[p] = "l:" + target
		case typ.IsRegular():
			b, err := r.ReadFile(p)
			if err != nil {
				m[p] = "err:" + err.Error()
			} else {
				m[p] = "f:" + string(b)
			}
		default:
			m[p] = "t:" + typ.String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// around is the tree around the workspace: everything under root but the
// workspace itself (and the symlink that may name it).
func (e *atkEnv) aroundTree() map[string]string {
	return atkTree(e.t, e.root, func(rel string) bool { return rel == "ws" || rel == "wslink" })
}

// wsTree is the workspace without intentgate's and git's bookkeeping.
func (e *atkEnv) wsTree() map[string]string {
	return atkTree(e.t, e.wsReal, func(rel string) bool {
		return rel == ".orchestration" || rel == ".git"
	})
}

func atkDiff(before, after map[string]string) (added, changed, removed []string) {
	for k, v := range after {
		if b, ok := before[k]; !ok {
			added = append(added, k)
		} else if b != v {
			changed = append(changed, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			removed = append(removed, k)
		}
	}
	sort.Strings(added)
	sort.Strings(changed)
	sort.Strings(removed)
	return
}

func atkShort(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// baseline records the tree around the workspace; checkAround compares.
func (e *atkEnv) baseline() { e.around = e.aroundTree() }

func (e *atkEnv) checkAround() {
	e.t.Helper()
	a, c, r := atkDiff(e.around, e.aroundTree())
	if len(a)+len(c)+len(r) > 0 {
		e.t.Errorf("SOMETHING OUTSIDE THE WORKSPACE CHANGED: added %v, changed %v, removed %v", a, c, r)
	}
	if b, err := os.ReadFile(e.out + "/secret.txt"); err != nil || string(b) != e.secret+"\n" {
		e.t.Errorf("the outside secret file was modified or removed: %q %v", b, err)
	}
}

// ---- the dispatch process ----

type atkProc struct {
	e      *atkEnv
	cmd    *exec.Cmd
	cancel context.CancelFunc
	in     *bufio.Writer
	inC    interface{ Close() error }
	out    *bufio.Reader
	stderr atkSyncBuffer
	raw    bytes.Buffer // all of stdout
	n      int
	closed bool
}

func (e *atkEnv) start() *atkProc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), atkHangGuard)
	cmd := exec.CommandContext(ctx, atkBin, "dispatch", "--workspace", e.ws, "--agent", "attack-test", "--model", "test/model")
	cmd.Dir = e.root
	cmd.Env = e.gitEnv()
	cmd.WaitDelay = 5 * time.Second
	p := &atkProc{e: e, cmd: cmd, cancel: cancel}
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p.in, p.inC, p.out = bufio.NewWriter(stdin), stdin, bufio.NewReaderSize(stdout, 1<<16)
	e.t.Cleanup(p.close)
	return p
}

// send runs one call in session "s" and returns its decoded answer.
func (p *atkProc) send(tool string, args map[string]any) resultLine {
	return p.sendAs("s", tool, args)
}

func (p *atkProc) sendAs(session, tool string, args map[string]any) resultLine {
	p.e.t.Helper()
	p.n++
	line, err := json.Marshal(map[string]any{"id": fmt.Sprintf("c%d", p.n), "session": session, "tool": tool, "args": args})
	if err != nil {
		p.e.t.Fatal(err)
	}
	p.in.Write(append(line, '\n'))
	if err := p.in.Flush(); err != nil {
		p.e.t.Fatalf("sending call %d: %v (stderr: %s)", p.n, err, p.stderr.String())
	}
	ans, err := p.out.ReadBytes('\n')
	p.raw.Write(ans)
	if err != nil {
		p.e.t.Fatalf("no answer to call %d %s %v: %v; the process hung past %s or died (stderr: %s)",
			p.n, tool, args, err, atkHangGuard, p.stderr.String())
	}
	var res resultLine
	if err := json.Unmarshal(ans, &res); err != nil {
		p.e.t.Fatalf("answer %q: %v", ans, err)
	}
	if res.ID != fmt.Sprintf("c%d", p.n) {
		p.e.t.Fatalf("answer to call c%d has id %q: %s", p.n, res.ID, ans)
	}
	return res
}

func (p *atkProc) id() string { return fmt.Sprintf("c%d", p.n) }

func (p *atkProc) close() {
	if p.closed {
		return
	}
	p.closed = true
	p.inC.Close()
	err := p.cmd.Wait()
	p.cancel()
	if err != nil {
		p.e.t.Errorf("dispatch exited with %v (stderr: %s)", err, p.stderr.String())
	}
}

// selectIntent selects id in session "s" and fails unless it was accepted.
func (p *atkProc) selectIntent(id string) {
	p.e.t.Helper()
	if res := p.send("select_active_intent", map[string]any{"intent_id": id}); !res.OK {
		p.e.t.Fatalf("select_active_intent %s: %+v %+v", id, res.Denial, res.Error)
	}
}

// checkNoSecret fails if either secret appears in anything the process
// wrote or recorded.
func (p *atkProc) checkNoSecret() {
	p.e.t.Helper()
	e := p.e
	places := map[string][]byte{"stdout": p.raw.Bytes(), "stderr": p.stderr.Bytes()}
	for _, f := range []string{"agent_trace.jsonl", "intent_map.md"} {
		if b, err := os.ReadFile(filepath.Join(e.wsReal, ".orchestration", f)); err == nil {
			places[f] = b
		}
	}
	for where, b := range places {
		for _, s := range []string{e.secret, e.secret2} {
			if bytes.Contains(b, []byte(s)) {
				e.t.Errorf("SECRET LEAKED into %s", where)
			}
		}
	}
}

func atkCode(r resultLine) engine.Code {
	switch {
	case r.OK:
		return atkAllow
	case r.Denial != nil:
		return r.Denial.Code
	default:
		return atkToolErr
	}
}

func atkDescribe(r resultLine) string {
	switch {
	case r.OK:
		return "ok: " + atkShort(r.Output)
	case r.Denial != nil:
		return fmt.Sprintf("denial %s: %s", r.Denial.Code, r.Denial.Message)
	}
	return "error: " + r.Error
}

func (e *atkEnv) wantCode(what string, got resultLine, want engine.Code) {
	e.t.Helper()
	if atkCode(got) != want {
		e.t.Errorf("%s: got %s, want %s", what, atkDescribe(got), want)
	}
}

// ---- the ledger ----

func (e *atkEnv) ledger() []*orchestration.Record {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.wsReal, ".orchestration", "agent_trace.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var recs []*orchestration.Record
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, err := orchestration.ParseRecord(line)
		if err != nil {
			e.t.Fatalf("ledger line %q: %v", line, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// records returns the ledger records of call id about path ("" for any).
func (e *atkEnv) records(callID, path string) []*orchestration.Record {
	var out []*orchestration.Record
	for _, r := range e.ledger() {
		if r.Meta == nil || r.Meta.CallID != callID {
			continue
		}
		if path == "" {
			out = append(out, r)
			continue
		}
		for _, f := range r.Files {
			if f.Path == path {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

func atkRanges(r *orchestration.Record) int {
	n := 0
	for _, f := range r.Files {
		for _, c := range f.Conversations {
			n += len(c.Ranges)
		}
	}
	return n
}

// wantDenyRecord checks that a refusal was recorded as evidence.
func (e *atkEnv) wantDenyRecord(callID string, code engine.Code) {
	e.t.Helper()
	for _, r := range e.records(callID, "") {
		var d engine.Denial
		if r.Meta.Decision == orchestration.DecisionDeny && json.Unmarshal(r.Meta.Denial, &d) == nil && d.Code == code {
			return
		}
	}
	e.t.Errorf("no deny record with %s for call %s in the ledger", code, callID)
}

// ---- path cases ----

type atkPathCase struct {
	name   string
	setup  func(e *atkEnv)
	intent string // default INT-001
	path   string // placeholders as in atkEnv.expand
	opts   atkOpts

	write     engine.Code                    // expected for write_to_file; "" = not tried
	read      engine.Code                    // expected for read_file; "" = not tried
	readFirst bool                           // read_file the path before the write, as an agent must
	content   *string                        // what to write; default a marker naming the case
	args      func(e *atkEnv) map[string]any // more arguments for the write

	lands    string // for an allowed write: the canonical path that must hold the content
	readWant string // for an allowed read: text the output must contain
	after    func(e *atkEnv)
}

func atkStr(s string) *string { return &s }

func runAtkPathCases(t *testing.T, cases []atkPathCase) {
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runAtkPathCase(t, tc)
		})
	}
}

func runAtkPathCase(t *testing.T, tc atkPathCase) {
	e := newAtkEnv(t, tc.opts)
	if tc.setup != nil {
		tc.setup(e)
	}
	e.baseline()
	wsBefore := e.wsTree()
	passwd := atkFileSum("/etc/passwd")

	path := e.expand(tc.path)
	content := "PWNED by " + tc.name + "\n"
	if tc.content != nil {
		content = *tc.content
	}
	intent := tc.intent
	if intent == "" {
		intent = "INT-001"
	}
	p := e.start()
	p.selectIntent(intent)
	if tc.readFirst {
		p.send("read_file", map[string]any{"path": path})
	}
	if tc.write != "" {
		args := map[string]any{"path": path, "content": content}
		if tc.args != nil {
			for k, v := range tc.args(e) {
				args[k] = v
			}
		}
		res := p.send("write_to_file", args)
		e.wantCode("write_to_file "+atkShort(fmt.Sprintf("%q", path)), res, tc.write)
		if tc.write != atkAllow && res.Denial != nil {
			e.wantDenyRecord(p.id(), tc.write)
		}
	}
	if tc.read != "" {
		res := p.send("read_file", map[string]any{"path": path})
		e.wantCode("read_file "+atkShort(fmt.Sprintf("%q", path)), res, tc.read)
		if tc.read == atkAllow && tc.readWant != "" && !strings.Contains(res.Output, tc.readWant) {
			t.Errorf("read_file output %q does not contain %q", atkShort(res.Output), tc.readWant)
		}
	}
	p.close()
	p.checkNoSecret()
	e.checkAround()
	if passwd != atkFileSum("/etc/passwd") {
		t.Errorf("/etc/passwd CHANGED")
	}

	added, changed, removed := atkDiff(wsBefore, e.wsTree())
	if len(removed) > 0 {
		t.Errorf("workspace entries removed: %v", removed)
	}
	if tc.write == atkAllow {
		if tc.lands == "" {
			t.Fatalf("case allows a write but names no lands path")
		}
		r, err := os.OpenRoot(e.wsReal)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := r.ReadFile(tc.lands)
		if err != nil || string(got) != content {
			t.Errorf("the write did not land at %q: %q %v", tc.lands, atkShort(string(got)), err)
		}
		for _, k := range append(added, changed...) {
			isAncestor := strings.HasPrefix(tc.lands, k+"/")
			if k == tc.lands || isAncestor {
				continue
			}
			t.Errorf("the write changed %q too (%s), not only %q", atkShort(k), atkShort(atkBefore(wsBefore, k)), tc.lands)
		}
	} else if len(added)+len(changed) > 0 {
		t.Errorf("a refused call changed the workspace: added %v, changed %v", added, changed)
	}
	if tc.after != nil {
		tc.after(e)
	}
}

func atkBefore(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "new"
}

func atkFileSum(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// atkChain makes n symlinks src/<prefix>1 -> <prefix>2 -> ... -> last.
func atkChain(e *atkEnv, prefix string, n int, last string) {
	for i := 1; i < n; i++ {
		e.symlink(fmt.Sprintf("%s%d", prefix, i+1), fmt.Sprintf("src/%s%d", prefix, i))
	}
	e.symlink(last, fmt.Sprintf("src/%s%d", prefix, n))
}

func TestAttackPaths(t *testing.T) {
	t.Parallel()
	longName := strings.Repeat("n", 200)
	deepRel := "src/" + strings.Repeat(longName+"/", 20) + "x.go" // about 4 KB: short enough, but the absolute path is past PATH_MAX
	cases := []atkPathCase{
		// 1. ".." in all its forms: refused outright, even when it would stay inside.
		{name: "01/src/../../etc/passwd", path: "src/../../etc/passwd", write: engine.PathEscape, read: engine.PathEscape},
		{name: "01/src/./../secret.txt", path: "src/./../secret.txt", write: engine.PathEscape, read: engine.PathEscape,
			setup: func(e *atkEnv) { e.write("secret.txt", "workspace root file\n") }},
		{name: "01/src/a/../../b", path: "src/a/../../b", write: engine.PathEscape, read: engine.PathEscape},
		{name: "01/src/../../outside/secret.txt", path: "src/../../outside/secret.txt", write: engine.PathEscape, read: engine.PathEscape},
		{name: "01/src/../src/ok.go (inside, still refused)", path: "src/../src/ok.go", write: engine.PathEscape},
		{name: "01/..", path: "..", write: engine.PathEscape, read: engine.PathEscape},

		// 2. Absolute paths.
		{name: "02//etc/passwd", path: "/etc/passwd", write: engine.PathEscape, read: engine.PathEscape},
		{name: "02//proc/self/root/etc/passwd", path: "/proc/self/root/etc/passwd", write: engine.PathEscape, read: engine.PathEscape},
		{name: "02/<outside>/secret.txt", path: "{out}/secret.txt", write: engine.PathEscape, read: engine.PathEscape},
		{name: "02/<outside>/new.txt", path: "{out}/new.txt", write: engine.PathEscape},
		{name: "02/<ws>/../outside/secret.txt", path: "{ws}/../outside/secret.txt", write: engine.PathEscape, read: engine.PathEscape},
		{name: "02/<ws>/src/abs.go (inside, in scope)", path: "{ws}/src/abs.go", write: atkAllow, lands: "src/abs.go"},
		{name: "02/<ws>/src/main.go (read inside)", path: "{ws}/src/main.go", read: atkAllow, readWant: "package main"},
		{name: "02/<ws>/docs/abs.md (inside, out of scope)", path: "{ws}/docs/abs.md", write: engine.ScopeViolation},
		{name: "02/<ws> (the root itself)", path: "{ws}", write: engine.InvalidArgument},
		{name: "02/<wslink>/src/abs.go (workspace given through a symlink)", opts: atkOpts{viaLink: true},
			path: "{ws}/src/abs.go", write: atkAllow, lands: "src/abs.go"},
		{name: "02/<wsreal>/src/abs.go (workspace given through a symlink)", opts: atkOpts{viaLink: true},
			path: "{wsreal}/src/abs.go", write: atkAllow, lands: "src/abs.go"},
		{name: "02/<wslink>/docs/abs.md (workspace given through a symlink)", opts: atkOpts{viaLink: true},
			path: "{ws}/docs/abs.md", write: engine.ScopeViolation},

		// 3. Prefixes that are not parents.
		{name: "03/<ws>-evil/x", path: "{evil}/x", write: engine.PathEscape, read: engine.PathEscape},
		{name: "03/<ws>/../ws-evil/x", path: "{ws}/../ws-evil/x", write: engine.PathEscape, read: engine.PathEscape},
		{name: "03/src-old/a.go", path: "src-old/a.go", write: engine.ScopeViolation},
		{name: "03/src/s -> <ws>-evil/x (symlink target with the workspace as a string prefix)",
			setup: func(e *atkEnv) { e.symlink("{evil}/x", "src/s") }, path: "src/s", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "03/srcfoo.go", path: "srcfoo.go", write: engine.ScopeViolation},

		// 4. A file symlink inside the scope.
		{name: "04/src/leak -> <outside>/secret.txt", setup: func(e *atkEnv) { e.symlink("{out}/secret.txt", "src/leak") },
			path: "src/leak", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "04/src/tolink -> ../docs/readme.md (inside, out of scope)", setup: func(e *atkEnv) { e.symlink("../docs/readme.md", "src/tolink") },
			path: "src/tolink", readFirst: true, write: engine.ScopeViolation, read: atkAllow, readWant: "hello world"},

		// 5. A directory symlink inside the scope.
		{name: "05/src/link/authorized_keys", setup: func(e *atkEnv) { e.symlink("{out}/dir", "src/link") },
			path: "src/link/authorized_keys", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "05/src/link/new_key", setup: func(e *atkEnv) { e.symlink("{out}/dir", "src/link") },
			path: "src/link/new_key", write: engine.PathEscape},

		// 6. Dangling symlinks: creating the "new file" would create it at the target.
		{name: "06/src/dang -> <outside>/created.txt", setup: func(e *atkEnv) { e.symlink("{out}/created.txt", "src/dang") },
			path: "src/dang", write: engine.PathEscape, read: engine.PathEscape},
		{name: "06/src/dang -> ../../outside/created.txt", setup: func(e *atkEnv) { e.symlink("../../outside/created.txt", "src/dang") },
			path: "src/dang", write: engine.PathEscape},
		{name: "06/src/dang -> ../docs/new.md (inside, out of scope)", setup: func(e *atkEnv) { e.symlink("../docs/new.md", "src/dang") },
			path: "src/dang", write: engine.ScopeViolation},
		{name: "06/src/dang -> new.go (inside, in scope: lands at the target)", setup: func(e *atkEnv) { e.symlink("new.go", "src/dang") },
			path: "src/dang", write: atkAllow, lands: "src/new.go"},

		// 7. A new file under a directory symlink.
		{name: "07/src/linkdir/payload.sh", setup: func(e *atkEnv) { e.symlink("{out}/dir", "src/linkdir") },
			path: "src/linkdir/payload.sh", write: engine.PathEscape},
		{name: "07/src/linkdir/sub/payload.sh", setup: func(e *atkEnv) { e.symlink("{out}/dir", "src/linkdir") },
			path: "src/linkdir/sub/payload.sh", write: engine.PathEscape},
		{name: "07/src/linkdir -> ../../outside/dir (relative)", setup: func(e *atkEnv) { e.symlink("../../outside/dir", "src/linkdir") },
			path: "src/linkdir/payload.sh", write: engine.PathEscape},

		// 8. Chains and loops.
		{name: "08/chain of 3 ending outside", setup: func(e *atkEnv) { atkChain(e, "c", 3, "{out}/secret.txt") },
			path: "src/c1", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "08/loop a -> b -> a", setup: func(e *atkEnv) { e.symlink("loop2", "src/loop1"); e.symlink("loop1", "src/loop2") },
			path: "src/loop1", write: engine.PathEscape, read: engine.PathEscape},
		{name: "08/self loop", setup: func(e *atkEnv) { e.symlink("self", "src/self") },
			path: "src/self", write: engine.PathEscape},
		{name: "08/loop through a directory in the middle", setup: func(e *atkEnv) { e.symlink("loop2", "src/loop1"); e.symlink("loop1", "src/loop2") },
			path: "src/loop1/x.go", write: engine.PathEscape},
		{name: "08/chain of 45 inside the scope (past the kernel's 40)", setup: func(e *atkEnv) {
			e.write("src/real.txt", "real\n")
			atkChain(e, "k", 45, "real.txt")
		}, path: "src/k1", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "08/chain of 5 inside the scope (resolves)", setup: func(e *atkEnv) {
			e.write("src/real.txt", "real\n")
			atkChain(e, "k", 5, "real.txt")
		}, path: "src/k1", readFirst: true, write: atkAllow, lands: "src/real.txt"},
		{name: "08/src/d -> . repeated 41 times", setup: func(e *atkEnv) { e.symlink(".", "src/d") },
			path: "src/" + strings.Repeat("d/", 41) + "a.go", write: engine.PathEscape},
		{name: "08/src/d -> . repeated 10 times (resolves)", setup: func(e *atkEnv) { e.symlink(".", "src/d") },
			path: "src/" + strings.Repeat("d/", 10) + "a.go", write: atkAllow, lands: "src/a.go"},

		// 9. Relative symlink targets.
		{name: "09/src/x -> ../../outside/secret.txt", setup: func(e *atkEnv) { e.symlink("../../outside/secret.txt", "src/x") },
			path: "src/x", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "09/src/up -> ../.. then src/up/outside/secret.txt", setup: func(e *atkEnv) { e.symlink("../..", "src/up") },
			path: "src/up/outside/secret.txt", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "09/src/rel -> ../docs then src/rel/readme.md", setup: func(e *atkEnv) { e.symlink("../docs", "src/rel") },
			path: "src/rel/readme.md", readFirst: true, write: engine.ScopeViolation, read: atkAllow, readWant: "hello world"},
		{name: "09/src/r -> ../../ws/docs/readme.md (leaves, re-enters: refused)", setup: func(e *atkEnv) { e.symlink("../../ws/docs/readme.md", "src/r") },
			path: "src/r", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "09/src/abs -> <ws>/docs (absolute, inside)", setup: func(e *atkEnv) { e.symlink("{wsreal}/docs", "src/abs") },
			path: "src/abs/readme.md", readFirst: true, write: engine.ScopeViolation},

		// 12. Hard links: the other name may be anywhere.
		{name: "12/src/hl == <outside>/secret.txt", setup: func(e *atkEnv) { e.link("{out}/secret.txt", "src/hl") },
			path: "src/hl", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "12/src/hl == <outside>/secret.txt, truncate", setup: func(e *atkEnv) { e.link("{out}/secret.txt", "src/hl") },
			path: "src/hl", readFirst: true, content: atkStr(""), write: engine.PathEscape},
		{name: "12/src/hl == <outside>/secret.txt, with its expected_sha256", setup: func(e *atkEnv) { e.link("{out}/secret.txt", "src/hl") },
			path: "src/hl", write: engine.PathEscape, args: func(e *atkEnv) map[string]any {
				// The attacker knows (or guesses) the outside file's hash.
				s := sha256.Sum256([]byte(e.secret + "\n"))
				return map[string]any{"expected_sha256": hex.EncodeToString(s[:])}
			}},
		{name: "12/src/hl == docs/readme.md (inside, out of scope)", setup: func(e *atkEnv) { e.link("{wsreal}/docs/readme.md", "src/hl") },
			path: "src/hl", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},

		// 13. Case variants: protected names are matched case-insensitively, scopes are not.
		{name: "13/.GIT/config", path: ".GIT/config", write: engine.ProtectedPath},
		{name: "13/.Orchestration/agent_trace.jsonl", path: ".Orchestration/agent_trace.jsonl", write: engine.ProtectedPath},
		{name: "13/.ORCHESTRATION/active_intents.yaml", path: ".ORCHESTRATION/active_intents.yaml", write: engine.ProtectedPath},
		{name: "13/SRC/main.go", path: "SRC/main.go", write: engine.ScopeViolation},
		{name: "13/Src/new.go", path: "Src/new.go", write: engine.ScopeViolation},
		{name: "13/.GIT/config under scope **", intent: "INT-ALL", path: ".GIT/config", write: engine.ProtectedPath},

		// 14. Unicode. Decision: scope matching is normalization-insensitive.
		// The glob and the path are both compared in NFC, so a name is in
		// scope in either spelling or in neither; the file written is the
		// one with the exact bytes sent (on Linux a separate directory entry,
		// on macOS the same file), which a person reading the glob would
		// call "café" either way. Protection (.intentignore, governed files)
		// uses the same normalization, so a spelling cannot dodge a rule.
		// Invisible code points (zero-width, bidi, BOM, soft hyphen) are
		// refused outright.
		{name: "14/NFC glob, NFD path", intent: "INT-CAFE", path: "src/" + atkNFD + "/a.go", write: atkAllow, lands: "src/" + atkNFD + "/a.go"},
		{name: "14/NFC glob, NFC path", intent: "INT-CAFE", path: "src/" + atkNFC + "/a.go", write: atkAllow, lands: "src/" + atkNFC + "/a.go"},
		{name: "14/NFD glob, NFC path", intent: "INT-CAFE-NFD", path: "src/" + atkNFC + "/a.go", write: atkAllow, lands: "src/" + atkNFC + "/a.go"},
		{name: "14/NFD glob, NFD path", intent: "INT-CAFE-NFD", path: "src/" + atkNFD + "/a.go", write: atkAllow, lands: "src/" + atkNFD + "/a.go"},
		{name: "14/NFC glob, unaccented look-alike", intent: "INT-CAFE", path: "src/cafe/a.go", write: engine.ScopeViolation},
		{name: "14/NFC glob, NFD directory on disk, NFC path", intent: "INT-CAFE", setup: func(e *atkEnv) {
			e.write("src/"+atkNFD+"/old.go", "old\n")
		}, path: "src/" + atkNFC + "/old.go", write: atkAllow, lands: "src/" + atkNFC + "/old.go"},
		{name: "14/.intentignore NFC, path NFD", setup: func(e *atkEnv) { e.write(".intentignore", "src/"+atkNFC+"/secret.go\n") },
			path: "src/" + atkNFD + "/secret.go", write: engine.ProtectedPath},
		{name: "14/.intentignore NFD, path NFC", setup: func(e *atkEnv) { e.write(".intentignore", "src/"+atkNFD+"/secret.go\n") },
			path: "src/" + atkNFC + "/secret.go", write: engine.ProtectedPath},
		{name: "14/zero-width space", path: "src/a\u200b.go", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "14/zero-width joiner in .git", intent: "INT-ALL", path: ".g\u200dit/config", write: engine.InvalidArgument},
		{name: "14/zero-width non-joiner in .orchestration", intent: "INT-ALL", path: ".orchestration\u200c/active_intents.yaml", write: engine.InvalidArgument},
		{name: "14/bidi override U+202E", path: "src/\u202eog.a", write: engine.InvalidArgument},
		{name: "14/bidi isolate U+2066", path: "src/\u2066a.go", write: engine.InvalidArgument},
		{name: "14/BOM", path: "\ufeffsrc/a.go", write: engine.InvalidArgument},
		{name: "14/soft hyphen", path: "src/a\u00ad.go", write: engine.InvalidArgument},
		{name: "14/word joiner U+2060", path: "src/a\u2060.go", write: engine.InvalidArgument},
		{name: "14/fullwidth dots are names", path: "src/\uff0e\uff0e/\uff0e\uff0e/x", write: atkAllow, lands: "src/\uff0e\uff0e/\uff0e\uff0e/x"},
		{name: "14/division slash is a name", path: "src\u2215..\u2215x", write: engine.ScopeViolation},

		// 15. Trailing separators and dots.
		{name: "15/src/main.go/", path: "src/main.go/", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "15/src/dirlink/", setup: func(e *atkEnv) { e.symlink("../docs", "src/dirlink") },
			path: "src/dirlink/", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "15/src/main.go/.", path: "src/main.go/.", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "15/src/newdir/.", path: "src/newdir/.", write: engine.InvalidArgument},
		{name: "15/src/main.go. is another name on Linux", path: "src/main.go.", write: atkAllow, lands: "src/main.go."},
		{name: "15/src (a directory)", path: "src", write: engine.InvalidArgument, read: engine.InvalidArgument},

		// 16. Quotes and whitespace are never stripped.
		{name: `16/"src/a.go"`, path: `"src/a.go"`, write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: `16/'src/a.go'`, path: `'src/a.go'`, write: engine.InvalidArgument},
		{name: "16/`src/a.go`", path: "`src/a.go`", write: engine.InvalidArgument},
		{name: `16/"../../outside/secret.txt"`, path: `"../../outside/secret.txt"`, write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "16/leading space", path: " src/a.go", write: engine.InvalidArgument},
		{name: "16/trailing space", path: "src/a.go ", write: engine.InvalidArgument},
		{name: "16/trailing newline", path: "src/a.go\n", write: engine.InvalidArgument},
		{name: "16/leading tab", path: "\tsrc/a.go", write: engine.InvalidArgument},
		{name: "16/trailing no-break space", path: "src/a.go\u00a0", write: engine.InvalidArgument},
		{name: "16/ideographic space", path: "\u3000src/a.go", write: engine.InvalidArgument},
		{name: "16/carriage return inside", path: "src/a\r.go", write: engine.InvalidArgument},
		{name: `16/unbalanced quote "src/a.go`, path: `"src/a.go`, write: engine.ScopeViolation},
		{name: `16/src/"a.go" is a name`, path: `src/"a.go"`, write: atkAllow, lands: `src/"a.go"`},
		{name: "16/src /a.go", path: "src /a.go", write: engine.ScopeViolation},
		{name: "16/inner space is a name", path: "src/a b.go", write: atkAllow, lands: "src/a b.go"},

		// 17. NUL.
		{name: "17/src/a.go NUL .txt", path: "src/a.go\x00.txt", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "17/NUL /etc/passwd", path: "\x00/etc/passwd", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "17/src/main.go NUL", path: "src/main.go\x00", write: engine.InvalidArgument, read: engine.InvalidArgument},

		// 18. Never expanded.
		{name: "18/~/x", path: "~/x", write: engine.ScopeViolation},
		{name: "18/~/.ssh/id_rsa", path: "~/.ssh/id_rsa", write: engine.ScopeViolation, read: atkToolErr},
		{name: "18/~root/x", path: "~root/x", write: engine.ScopeViolation},
		{name: "18/$HOME/x", path: "$HOME/x", write: engine.ScopeViolation},
		{name: "18/${HOME}/.ssh/id_rsa", path: "${HOME}/.ssh/id_rsa", write: engine.ScopeViolation, read: atkToolErr},
		{name: "18/~", path: "~", write: engine.ScopeViolation},
		{name: "18/src/~/a.go is a name", path: "src/~/a.go", write: atkAllow, lands: "src/~/a.go"},
		{name: "18/src/$HOME/a.go is a name", path: "src/$HOME/a.go", write: atkAllow, lands: "src/$HOME/a.go"},
		{name: "18/src/~root is a name", path: "src/~root", write: atkAllow, lands: "src/~root"},

		// 19. Backslashes and Windows forms.
		{name: `19/src\..\..\x`, path: `src\..\..\x`, write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: `19/src\a.go`, path: `src\a.go`, write: engine.InvalidArgument},
		{name: `19/C:\x`, path: `C:\x`, write: engine.InvalidArgument},
		{name: `19/C:/x`, path: `C:/x`, write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: `19/c:x`, path: `c:x`, write: engine.InvalidArgument},
		{name: `19/\\server\share`, path: `\\server\share`, write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: `19/\\?\C:\x`, path: `\\?\C:\x`, write: engine.InvalidArgument},
		{name: `19///server/share/x`, path: `//server/share/x`, write: engine.PathEscape, read: engine.PathEscape},

		// 20. Percent-encoding is never decoded.
		{name: "20/%2e%2e/%2e%2e/etc/passwd", path: "%2e%2e/%2e%2e/etc/passwd", write: engine.ScopeViolation, read: atkToolErr},
		{name: "20/..%2f..%2fetc%2fpasswd", path: "..%2f..%2fetc%2fpasswd", write: engine.ScopeViolation, read: atkToolErr},
		{name: "20/%2Fetc%2Fpasswd", path: "%2Fetc%2Fpasswd", write: engine.ScopeViolation},
		{name: "20/src%2f..%2f..%2fx", path: "src%2f..%2f..%2fx", write: engine.ScopeViolation},
		{name: "20/src/%2e%2e/%2e%2e/x is a name", path: "src/%2e%2e/%2e%2e/x", write: atkAllow, lands: "src/%2e%2e/%2e%2e/x"},
		{name: "20/src/..%2f..%2fx is a name", path: "src/..%2f..%2fx", write: atkAllow, lands: "src/..%2f..%2fx"},
		{name: "20/file://<outside>/secret.txt", path: "file://{out}/secret.txt", write: engine.ScopeViolation, read: atkToolErr},

		// 21. Repeated and empty separators.
		{name: "21/src//a.go", path: "src//a.go", write: atkAllow, lands: "src/a.go"},
		{name: "21/src//../x", path: "src//../x", write: engine.PathEscape},
		{name: "21/./src/./a.go", path: "./src/./a.go", write: atkAllow, lands: "src/a.go"},
		{name: "21/.//src///b.go", path: ".//src///b.go", write: atkAllow, lands: "src/b.go"},
		{name: "21/src/./../x", path: "src/./../x", write: engine.PathEscape},
		{name: "21/<ws>//src/c.go", path: "{ws}//src/c.go", write: atkAllow, lands: "src/c.go"},

		// 22. Length and depth.
		{name: "22/path longer than 4096 bytes", path: "src/" + strings.Repeat("a/", 2100) + "x.go", write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "22/component of 256 bytes", path: "src/" + strings.Repeat("c", 256), write: engine.InvalidArgument, read: engine.InvalidArgument},
		{name: "22/component of 255 bytes", path: "src/" + strings.Repeat("c", 255), write: atkAllow, lands: "src/" + strings.Repeat("c", 255)},
		{name: "22/300 nested directories", path: "src/" + strings.Repeat("d/", 300) + "x.go", write: atkAllow, lands: "src/" + strings.Repeat("d/", 300) + "x.go"},
		{name: "22/absolute path past PATH_MAX", path: deepRel, write: atkAllow, lands: deepRel, read: atkAllow, readWant: "PWNED"},

		// 23. Special files: refused, and a FIFO must not hang anything.
		{name: "23/FIFO", setup: func(e *atkEnv) { e.mkfifo("src/fifo") }, path: "src/fifo", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/symlink to a FIFO", setup: func(e *atkEnv) { e.mkfifo("src/fifo"); e.symlink("fifo", "src/fl") },
			path: "src/fl", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/FIFO outside through a symlink", setup: func(e *atkEnv) {
			if err := syscall.Mkfifo(e.out+"/fifo", 0o644); err != nil {
				e.t.Skip(err)
			}
			e.symlink("{out}/fifo", "src/ofl")
		}, path: "src/ofl", write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/socket", setup: func(e *atkEnv) { e.socket("src/sock") }, path: "src/sock", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/device", setup: func(e *atkEnv) { e.mknod("src/null") }, path: "src/null", readFirst: true, write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/symlink to /dev/null", setup: func(e *atkEnv) { e.symlink("/dev/null", "src/devnull") },
			path: "src/devnull", write: engine.PathEscape, read: engine.PathEscape},
		{name: "23/symlink to /dev/zero", setup: func(e *atkEnv) { e.symlink("/dev/zero", "src/zero") }, path: "src/zero", read: engine.PathEscape},
		{name: "23//dev/null", path: "/dev/null", write: engine.PathEscape, read: engine.PathEscape},
		{name: "23//proc/self/root/etc/passwd", path: "/proc/self/root/etc/passwd", write: engine.PathEscape, read: engine.PathEscape},
		{name: "23//proc/self/root<ws>/src/main.go", path: "/proc/self/root{wsreal}/src/main.go", write: engine.PathEscape, read: engine.PathEscape},
		{name: "23//proc/self/fd/0", path: "/proc/self/fd/0", read: engine.PathEscape},
		{name: "23/src/proc -> /proc/self/root", setup: func(e *atkEnv) { e.symlink("/proc/self/root", "src/proc") },
			path: "src/proc/etc/passwd", write: engine.PathEscape, read: engine.PathEscape},

		// 24. The governed files, under an intent whose scope is "**".
		{name: "24/docs/x.md under ** (control: allowed)", intent: "INT-ALL", path: "docs/x.md", write: atkAllow, lands: "docs/x.md"},
		{name: "24/.orchestration/agent_trace.jsonl", intent: "INT-ALL", path: ".orchestration/agent_trace.jsonl", readFirst: true, write: engine.ProtectedPath},
		{name: "24/.orchestration/active_intents.yaml", intent: "INT-ALL", path: ".orchestration/active_intents.yaml", readFirst: true, write: engine.ProtectedPath},
		{name: "24/.orchestration/sessions/s.json", intent: "INT-ALL", path: ".orchestration/sessions/s.json", readFirst: true, write: engine.ProtectedPath},
		{name: "24/.orchestration/intent_map.md", intent: "INT-ALL", path: ".orchestration/intent_map.md", write: engine.ProtectedPath},
		{name: "24/.intentignore", intent: "INT-ALL", setup: func(e *atkEnv) { e.write(".intentignore", "*.pem\n") },
			path: ".intentignore", readFirst: true, write: engine.ProtectedPath},
		{name: "24/.git/hooks/pre-commit", intent: "INT-ALL", path: ".git/hooks/pre-commit", write: engine.ProtectedPath},
		{name: "24/.git/config", intent: "INT-ALL", path: ".git/config", readFirst: true, write: engine.ProtectedPath},
		{name: "24/src/.git/config (nested repository)", intent: "INT-ALL", path: "src/.git/config", write: engine.ProtectedPath},
		{name: "24/.claude/settings.json", intent: "INT-ALL", path: ".claude/settings.json", write: engine.ProtectedPath},
		{name: "24/.codex/config.toml", intent: "INT-ALL", path: ".codex/config.toml", write: engine.ProtectedPath},
		{name: "24/.gemini/settings.json", intent: "INT-ALL", path: ".gemini/settings.json", write: engine.ProtectedPath},
		{name: "24/.cursor/hooks.json", intent: "INT-ALL", path: ".cursor/hooks.json", write: engine.ProtectedPath},
		{name: "24/.clinerules/hooks/pre.sh", intent: "INT-ALL", path: ".clinerules/hooks/pre.sh", write: engine.ProtectedPath},
		{name: "24/.GIT/HOOKS/pre-commit", intent: "INT-ALL", path: ".GIT/HOOKS/pre-commit", write: engine.ProtectedPath},
		{name: "24/.git./config (trailing dot)", intent: "INT-ALL", path: ".git./config", write: engine.ProtectedPath},
		{name: "24/<ws>/.orchestration/active_intents.yaml (absolute)", intent: "INT-ALL", path: "{ws}/.orchestration/active_intents.yaml", write: engine.ProtectedPath},
		{name: "24/src/tl -> ../.orchestration/agent_trace.jsonl", intent: "INT-ALL",
			setup: func(e *atkEnv) { e.symlink("../.orchestration/agent_trace.jsonl", "src/tl") },
			path:  "src/tl", write: engine.ProtectedPath},
		{name: "24/src/ai -> ../.orchestration/active_intents.yaml", intent: "INT-ALL",
			setup: func(e *atkEnv) { e.symlink("../.orchestration/active_intents.yaml", "src/ai") },
			path:  "src/ai", readFirst: true, write: engine.ProtectedPath},
		{name: "24/src/g -> ../.git then src/g/hooks/pre-commit", intent: "INT-ALL",
			setup: func(e *atkEnv) { e.mkdir(e.abs(".git/hooks")); e.symlink("../.git", "src/g") },
			path:  "src/g/hooks/pre-commit", write: engine.ProtectedPath},
		{name: "24/.orchestration/active_intents.yaml under INT-001", path: ".orchestration/active_intents.yaml", readFirst: true, write: engine.ProtectedPath},
	}
	runAtkPathCases(t, cases)
}

func (e *atkEnv) link(target, rel string) {
	e.t.Helper()
	if err := os.Link(e.expand(target), e.abs(rel)); err != nil {
		e.t.Skipf("hard link: %v", err)
	}
}

func (e *atkEnv) mkfifo(rel string) {
	e.t.Helper()
	if err := syscall.Mkfifo(e.abs(rel), 0o644); err != nil {
		e.t.Skipf("mkfifo: %v", err)
	}
}

func (e *atkEnv) mknod(rel string) {
	e.t.Helper()
	// /dev/null's numbers: a character device, 1:3.
	if err := syscall.Mknod(e.abs(rel), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		e.t.Skipf("mknod (needs privileges): %v", err)
	}
}

func (e *atkEnv) socket(rel string) {
	e.t.Helper()
	l, err := net.Listen("unix", e.abs(rel))
	if err != nil {
		e.t.Skipf("unix socket: %v", err)
	}
	e.t.Cleanup(func() { l.Close() })
}

// ---- 10, 11: the file or its directory changes between the calls ----

// TestAttackBetweenCalls covers what changes between a read and a write: the
// hash lock's NOT_READ and STALE_FILE, and items 10 and 11 at the dispatch
// level (the swap happens between two calls; the race inside one call is in
// engine/workspace_race_test.go).
func TestAttackBetweenCalls(t *testing.T) {
	t.Parallel()
	type step func(e *atkEnv)
	cases := []struct {
		name    string
		read    bool // read src/f.go first
		between step // done by "someone else" after the read
		args    map[string]any
		want    engine.Code
	}{
		{name: "11/overwrite without a read", want: engine.NotRead},
		{name: "11/changed since the read", read: true, want: engine.StaleFile,
			between: func(e *atkEnv) { e.write("src/f.go", "changed by a person\n") }},
		{name: "11/deleted since the read, then recreated", read: true, want: engine.StaleFile,
			between: func(e *atkEnv) { os.Remove(e.abs("src/f.go")); e.write("src/f.go", "new\n") }},
		{name: "11/wrong expected_sha256", read: true, want: engine.StaleFile,
			args: map[string]any{"expected_sha256": strings.Repeat("0", 64)}},
		{name: "11/file replaced by a symlink to outside after the read", read: true, want: engine.PathEscape,
			between: func(e *atkEnv) { os.Remove(e.abs("src/f.go")); e.symlink("{out}/secret.txt", "src/f.go") }},
		{name: "11/file replaced by a hard link to outside after the read", read: true, want: engine.PathEscape,
			between: func(e *atkEnv) { os.Remove(e.abs("src/f.go")); e.link("{out}/secret.txt", "src/f.go") }},
		{name: "11/file replaced by a FIFO after the read", read: true, want: engine.PathEscape,
			between: func(e *atkEnv) { os.Remove(e.abs("src/f.go")); e.mkfifo("src/f.go") }},
		{name: "10/parent replaced by a symlink to outside after the read", read: true, want: engine.PathEscape,
			between: func(e *atkEnv) {
				os.Rename(e.abs("src"), e.abs("src.moved"))
				e.symlink("{out}/dir", "src")
				e.writeAbs(e.out+"/dir/f.go", "planted outside\n")
				e.baseline()
			}},
		{name: "10/parent replaced by a symlink into docs after the read", read: true, want: engine.ScopeViolation,
			between: func(e *atkEnv) {
				os.Rename(e.abs("src"), e.abs("src.moved"))
				e.write("docs/f.go", "package f\n")
				e.symlink("docs", "src")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAtkEnv(t, atkOpts{})
			e.write("src/f.go", "package f\n")
			e.baseline()
			p := e.start()
			p.selectIntent("INT-001")
			if tc.read {
				if res := p.send("read_file", map[string]any{"path": "src/f.go"}); !res.OK {
					t.Fatalf("read: %s", atkDescribe(res))
				}
			}
			if tc.between != nil {
				tc.between(e)
			}
			wsBefore := e.wsTree()
			args := map[string]any{"path": "src/f.go", "content": "PWNED\n"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := p.send("write_to_file", args)
			e.wantCode("write_to_file src/f.go", res, tc.want)
			e.wantDenyRecord(p.id(), tc.want)
			if tc.want == engine.StaleFile && (res.Denial == nil || res.Denial.ActualSHA256 == "" || res.Denial.ExpectedSHA256 == "") {
				t.Errorf("STALE_FILE without both hashes: %+v", res.Denial)
			}
			p.close()
			p.checkNoSecret()
			e.checkAround()
			if a, c, r := atkDiff(wsBefore, e.wsTree()); len(a)+len(c)+len(r) > 0 {
				t.Errorf("a refused write changed the workspace: %v %v %v", a, c, r)
			}
		})
	}
}

// TestAttackRaceDispatch swaps src/d with a symlink to outside, atomically
// and over and over, while a dispatch process reads and writes
// src/d/f.txt: item 10 at the dispatch level. Whatever each call answers,
// nothing outside may change and the outside content may never be shown.
func TestAttackRaceDispatch(t *testing.T) {
	t.Parallel()
	e := newAtkEnv(t, atkOpts{})
	e.write("src/d/f.txt", "inside\n")
	e.writeAbs(e.out+"/dir/f.txt", e.secret2+"\n")
	d, decoy := e.abs("src/d"), e.abs("src/d.swap")
	if err := os.Symlink(e.out+"/dir", decoy); err != nil {
		t.Fatal(err)
	}
	exchange := func() error { return unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, decoy, unix.RENAME_EXCHANGE) }
	if err := exchange(); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE: %v", err)
	}
	exchange()
	e.baseline()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					exchange()
				}
				done <- n
				return
			default:
			}
			if exchange() == nil {
				n++
			}
			runtime.Gosched()
		}
	}()
	p := e.start()
	p.selectIntent("INT-001")
	counts := map[string]int{}
	for i := 0; i < 60; i++ {
		rr := p.send("read_file", map[string]any{"path": "src/d/f.txt"})
		counts["read "+string(atkCode(rr))]++
		if c := atkCode(rr); c != atkAllow && c != engine.PathEscape {
			t.Errorf("read under a swap: %s; want the content or PATH_ESCAPE", atkDescribe(rr))
		}
		res := p.send("write_to_file", map[string]any{"path": "src/d/f.txt", "content": fmt.Sprintf("PWNED %d\n", i)})
		counts["write "+string(atkCode(res))]++
		switch atkCode(res) {
		case atkAllow, engine.PathEscape, engine.NotRead, engine.StaleFile:
		default:
			t.Errorf("write under a swap: %s; want it done, PATH_ESCAPE, NOT_READ or STALE_FILE", atkDescribe(res))
		}
	}
	close(stop)
	swaps := <-done
	p.close()
	t.Logf("%d swaps; answers: %v", swaps, counts)
	p.checkNoSecret()
	e.checkAround()
}

// ---- 25: the intents cannot be loaded ----

func TestAttackIntentsUnavailable(t *testing.T) {
	t.Parallel()
	mutating := func(t *testing.T, e *atkEnv, p *atkProc, want engine.Code) {
		t.Helper()
		wsBefore := e.wsTree()
		e.wantCode("write_to_file src/new.go", p.send("write_to_file", map[string]any{"path": "src/new.go", "content": "PWNED\n"}), want)
		e.wantCode("write_to_file docs/new.md", p.send("write_to_file", map[string]any{"path": "docs/new.md", "content": "PWNED\n"}), want)
		e.wantCode("execute_command", p.send("execute_command", map[string]any{"command": "echo PWNED > src/cmd.go"}), want)
		if a, c, r := atkDiff(wsBefore, e.wsTree()); len(a)+len(c)+len(r) > 0 {
			t.Errorf("the workspace changed: %v %v %v", a, c, r)
		}
	}
	broken := map[string]string{
		"25/invalid YAML":            "active_intents: [\n",
		"25/invalid glob":            "active_intents:\n  - id: INT-001\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"src/[\"]\n",
		"25/glob with ..":            "active_intents:\n  - id: INT-001\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"src/../**\"]\n",
		"25/glob in braces with ..":  "active_intents:\n  - id: INT-001\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"{..,src}/**\"]\n",
		"25/absolute glob":           "active_intents:\n  - id: INT-001\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"/**\"]\n",
		"25/unknown field":           "active_intents:\n  - id: INT-001\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"src/**\"]\n    owned_scopes: [\"**\"]\n",
		"25/empty file":              "",
		"25/duplicate id widening":   atkIntents + "  - id: INT-001\n    name: dup\n    status: IN_PROGRESS\n    owned_scope: [\"**\"]\n",
		"25/YAML alias bomb attempt": "a: &a [x]\nactive_intents: *a\n",
	}
	for name, content := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newAtkEnv(t, atkOpts{})
			// A session that selected INT-001 while the file was good.
			p := e.start()
			p.selectIntent("INT-001")
			p.close()
			e.write(".orchestration/active_intents.yaml", content)
			p = e.start()
			e.wantCode("select_active_intent", p.send("select_active_intent", map[string]any{"intent_id": "INT-001"}), engine.HookError)
			mutating(t, e, p, engine.HookError)
		})
	}
	t.Run("25/missing active_intents.yaml", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{noYAML: true})
		p := e.start()
		e.wantCode("select_active_intent", p.send("select_active_intent", map[string]any{"intent_id": "INT-001"}), engine.HookError)
		mutating(t, e, p, engine.HookError)
	})
	t.Run("25/active_intents.yaml removed between processes", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{})
		p := e.start()
		p.selectIntent("INT-001")
		p.close()
		os.Remove(e.abs(".orchestration/active_intents.yaml"))
		mutating(t, e, e.start(), engine.HookError)
	})
	t.Run("25/active_intents.yaml removed while running", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{})
		p := e.start()
		p.selectIntent("INT-001")
		os.Remove(e.abs(".orchestration/active_intents.yaml"))
		mutating(t, e, p, engine.HookError)
	})
	t.Run("25/active_intents.yaml is a directory", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{noYAML: true})
		e.mkdir(e.abs(".orchestration/active_intents.yaml"))
		mutating(t, e, e.start(), engine.HookError)
	})
	t.Run("25/active_intents.yaml unreadable", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root reads a mode-000 file anyway")
		}
		e := newAtkEnv(t, atkOpts{})
		p := e.start()
		p.selectIntent("INT-001")
		p.close()
		os.Chmod(e.abs(".orchestration/active_intents.yaml"), 0)
		mutating(t, e, e.start(), engine.HookError)
	})
	t.Run("25/.intentignore cannot be read (matcher error)", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{})
		e.mkdir(e.abs(".intentignore"))
		p := e.start()
		p.selectIntent("INT-001")
		wsBefore := e.wsTree()
		e.wantCode("write_to_file src/new.go", p.send("write_to_file", map[string]any{"path": "src/new.go", "content": "PWNED\n"}), engine.HookError)
		if a, c, r := atkDiff(wsBefore, e.wsTree()); len(a)+len(c)+len(r) > 0 {
			t.Errorf("the workspace changed: %v %v %v", a, c, r)
		}
	})
	// By design (DESIGN.md: "a bad edit while running keeps the last good
	// set in force"), a process that already loaded the intents keeps them
	// when the file turns invalid. What must hold is that the broken file
	// cannot widen anything: the last good scope is still enforced.
	t.Run("25/invalid YAML while running keeps the last good scope", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{})
		p := e.start()
		p.selectIntent("INT-001")
		e.write(".orchestration/active_intents.yaml", "active_intents:\n  - id: INT-001\n    owned_scope: [\"**\"\n")
		e.wantCode("write_to_file docs/new.md", p.send("write_to_file", map[string]any{"path": "docs/new.md", "content": "PWNED\n"}), engine.ScopeViolation)
		if _, err := os.Stat(e.abs("docs/new.md")); err == nil {
			t.Errorf("docs/new.md was created")
		}
	})
}

// ---- commands ----

type atkCmdCase struct {
	name    string
	need    []string // programs the case needs
	commit  bool     // needs a git commit of the workspace
	intent  string
	setup   func(e *atkEnv)
	command string
	cwd     string

	denial     engine.Code // the call itself is refused
	violations []string    // paths that must be reported and recorded as violations
	reported   []string    // paths that must be reported as violations (when the ledger itself is the target)
	allows     []string    // paths that must be recorded as allowed changes with ranges
	deletes    []string    // paths that must be recorded as allowed deletions
	check      func(t *testing.T, e *atkEnv, res resultLine)
}

func TestAttackCommands(t *testing.T) {
	t.Parallel()
	longName := strings.Repeat("n", 200)
	cases := []atkCmdCase{
		{name: "cmd/echo x > outside-scope-file", command: "echo x > docs/echo.md", violations: []string{"docs/echo.md"}},
		{name: "cmd/tee", command: "echo x | tee docs/tee.md", violations: []string{"docs/tee.md"}},
		{name: "cmd/sed -i", command: "sed -i 's/hello/pwned/' docs/readme.md", violations: []string{"docs/readme.md"}},
		{name: "cmd/perl -pi", need: []string{"perl"}, command: "perl -pi -e 's/hello/pwned/' docs/readme.md", violations: []string{"docs/readme.md"}},
		{name: "cmd/python -c", need: []string{"python3"}, command: `python3 -c "open('docs/py.md','w').write('x\n')"`, violations: []string{"docs/py.md"}},
		{name: "cmd/git checkout -- f", need: []string{"git"}, commit: true,
			setup:   func(e *atkEnv) { e.write("docs/readme.md", "edited by a person, not committed\n") },
			command: "git checkout -- docs/readme.md", violations: []string{"docs/readme.md"}},
		{name: "cmd/mv", setup: func(e *atkEnv) { e.write("src/tmp.txt", "tmp\n") },
			command: "mv src/tmp.txt docs/moved.md", violations: []string{"docs/moved.md"}},
		{name: "cmd/mv tmp f (over an existing file)", command: "printf 'pwned\\n' > src/t && mv src/t docs/readme.md", violations: []string{"docs/readme.md"}},
		{name: "cmd/cp", command: "cp src/main.go docs/copy.go", violations: []string{"docs/copy.go"}},
		{name: "cmd/ln -sf /outside src/link", command: "ln -sf {out} src/link", violations: []string{"src/link"}},
		{name: "cmd/ln -sf /outside/secret.txt src/leak", command: "ln -sf {out}/secret.txt src/leak", violations: []string{"src/leak"}},
		{name: "cmd/ln -sf ../../outside src/rel", command: "ln -sf ../../outside src/rel", violations: []string{"src/rel"}},
		{name: "cmd/ln -sf over an existing file", setup: func(e *atkEnv) { e.write("src/x.go", "package x\n") },
			command: "ln -sf {out}/secret.txt src/x.go", violations: []string{"src/x.go"}},
		{name: "cmd/cd dir && ...", command: "cd docs && echo x > cd.md", violations: []string{"docs/cd.md"}},
		{name: "cmd/sh -c", command: "sh -c 'echo x > docs/sh.md'", violations: []string{"docs/sh.md"}},
		{name: "cmd/xargs", command: "echo docs/xargs.md | xargs touch", violations: []string{"docs/xargs.md"}},
		{name: "cmd/Makefile", need: []string{"make"},
			setup:   func(e *atkEnv) { e.write("build.mk", "all:\n\tprintf 'made\\n' > docs/made.md\n") },
			command: "make -s -f build.mk", violations: []string{"docs/made.md"}},
		{name: "cmd/cwd docs", cwd: "docs", command: "echo x > cwd.md", violations: []string{"docs/cwd.md"}},
		{name: "cmd/governed: active_intents.yaml", command: "echo '# pwned' >> .orchestration/active_intents.yaml",
			violations: []string{".orchestration/active_intents.yaml"}},
		{name: "cmd/governed: .intentignore", command: "echo '' > .intentignore", violations: []string{".intentignore"}},
		{name: "cmd/governed: .claude/settings.json under **", intent: "INT-ALL",
			setup:   func(e *atkEnv) { e.write(".claude/settings.json", "{\"hooks\":{}}\n") },
			command: "mkdir -p .claude && echo '{}' > .claude/settings.json", violations: []string{".claude/settings.json"}},
		{name: "cmd/governed: .git/hooks/pre-commit under **", need: []string{"git"}, intent: "INT-ALL",
			command: "printf '#!/bin/sh\\n' > .git/hooks/pre-commit", violations: []string{".git/hooks/pre-commit"}},
		{name: "cmd/in scope", command: "printf 'package x\\n\\nfunc X() {}\\n' > src/cmd.go", allows: []string{"src/cmd.go"}},
		{name: "cmd/in scope sed -i", command: "sed -i 's/main()/main2()/' src/main.go", allows: []string{"src/main.go"}},
		{name: "cmd/in scope with cwd src/", cwd: "src/", command: "echo 'package c' > c.go", allows: []string{"src/c.go"}},
		{name: "cmd/in scope and out of scope at once", command: "echo a > src/ok.go && echo b > docs/bad.md",
			allows: []string{"src/ok.go"}, violations: []string{"docs/bad.md"}},

		// In place, same size, mtime put back: only the ctime tells.
		{name: "cmd/same size in place with mtime restored", need: []string{"dd", "touch"},
			command:    "cat docs/readme.md > src/ref && touch -r docs/readme.md src/ref && printf 'EVIL' | dd of=docs/readme.md conv=notrunc 2>/dev/null && touch -r src/ref docs/readme.md",
			violations: []string{"docs/readme.md"}, allows: []string{"src/ref"}},
		// A tree too deep for the kernel's PATH_MAX must not make the
		// audit fail (and so hide the other changes), nor stop every later
		// command.
		{name: "cmd/tree past PATH_MAX hides nothing", need: []string{"perl"},
			// perl, because sh's cd works on the whole path and fails past PATH_MAX.
			command:    "perl -e 'mkdir \"docs/deep\" or die; chdir \"docs/deep\" or die; for (1..22) { mkdir \"" + longName + "\" or die; chdir \"" + longName + "\" or die } open(F, \">f.md\") or die; print F \"evil\\n\"' && echo evil > docs/hidden.md",
			violations: []string{"docs/hidden.md", "docs/deep"}},
		// A name that is not UTF-8 sorts before docs/: its record must not
		// keep the next violation out of the ledger.
		{name: "cmd/non-UTF-8 name first", command: "touch \"$(printf 'a\\377')\" && echo evil > docs/after.md",
			violations: []string{"docs/after.md", "a\ufffd"}},
		// A background process must not outlive the command and write
		// after the workspace was compared.
		{name: "cmd/background writer", need: []string{"mkfifo"},
			command: "mkfifo src/gate && (cat src/gate > /dev/null; echo evil > docs/late.md) > /dev/null 2>&1 &",
			check: func(t *testing.T, e *atkEnv, res resultLine) {
				gate := e.abs("src/gate")
				deadline := time.Now().Add(30 * time.Second) // a hang guard, not a timing assertion
				for {
					f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
					if errors.Is(err, syscall.ENXIO) || errors.Is(err, os.ErrNotExist) {
						// No reader left, or the whole background list
						// was killed before it made the FIFO.
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					f.Close()
					if time.Now().After(deadline) {
						t.Fatalf("the command's background process is still running after it returned")
					}
					time.Sleep(20 * time.Millisecond)
				}
				if _, err := os.Stat(e.abs("docs/late.md")); err == nil {
					t.Errorf("the background process wrote docs/late.md")
				}
			}},

		// A symlink in place of intentgate's lock directory is reported
		// (the redirections intentgate itself then writes through are in
		// TestAttackBookkeepingRedirect).
		{name: "cmd/locks directory swapped for a symlink to outside", setup: bookkeepingTarget,
			command: "rm -rf .orchestration/locks && ln -s {out}/dir .orchestration/locks", violations: []string{".orchestration/locks"}},

		// The cwd is checked like a path.
		{name: "cmd/cwd ..", cwd: "..", command: "echo x > escaped.txt", denial: engine.PathEscape},
		{name: "cmd/cwd outside", cwd: "{out}", command: "echo x > escaped.txt", denial: engine.PathEscape},
		{name: "cmd/cwd through a symlink to outside", setup: func(e *atkEnv) { e.symlink("{out}", "src/o") },
			cwd: "src/o", command: "echo x > escaped.txt", denial: engine.PathEscape},
		{name: "cmd/cwd src/..", cwd: "src/..", command: "echo x > escaped.txt", denial: engine.PathEscape},
		{name: "cmd/cwd a file", cwd: "src/main.go", command: "echo x > escaped.txt", denial: engine.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, prog := range tc.need {
				if _, err := exec.LookPath(prog); err != nil {
					t.Skipf("%s is not installed", prog)
				}
			}
			if atkContains(tc.need, "python3") && exec.Command("python3", "-c", "pass").Run() != nil {
				t.Skip("python3 does not run")
			}
			e := newAtkEnv(t, atkOpts{})
			if tc.commit {
				if !e.git {
					t.Skip("no git")
				}
				e.gitRun("add", "-A", ".")
				e.gitRun("commit", "-q", "-m", "init")
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			e.baseline()
			wsBefore := e.wsTree()
			intent := tc.intent
			if intent == "" {
				intent = "INT-001"
			}
			p := e.start()
			p.selectIntent(intent)
			args := map[string]any{"command": e.expand(tc.command)}
			if tc.cwd != "" {
				args["cwd"] = e.expand(tc.cwd)
			}
			// A confined command cannot write outside its intent's static
			// roots nor any governance path: those writes fail inside the
			// command and leave the files as they were.
			var refused, violations []string
			for _, v := range tc.violations {
				if atkConfinedRefuses(intent, v) {
					refused = append(refused, v)
				} else {
					violations = append(violations, v)
				}
			}
			refusedBefore := map[string]string{}
			for _, v := range refused {
				refusedBefore[v] = atkState(e.abs(v))
			}
			res := p.send("execute_command", args)
			id := p.id()
			p.close()
			p.checkNoSecret()
			e.checkAround()
			for _, v := range refused {
				if got := atkState(e.abs(v)); got != refusedBefore[v] {
					t.Errorf("the confined command changed %s: %s, was %s", v, got, refusedBefore[v])
				}
			}
			if len(refused) > 0 && !strings.Contains(res.Output, "Permission denied") && !strings.Contains(res.Output, "Read-only file system") &&
				strings.Contains(res.Output, "exited with code 0.") {
				t.Errorf("the command's output does not show the refused write:\n%s", res.Output)
			}
			if tc.denial != "" {
				e.wantCode("execute_command", res, tc.denial)
				e.wantDenyRecord(id, tc.denial)
				if a, c, r := atkDiff(wsBefore, e.wsTree()); len(a)+len(c)+len(r) > 0 {
					t.Errorf("a refused command changed the workspace: %v %v %v", a, c, r)
				}
				return
			}
			if !res.OK {
				t.Fatalf("execute_command: %s", atkDescribe(res))
			}
			for _, v := range tc.reported {
				if !strings.Contains(res.Output, "SCOPE_VIOLATION") || !strings.Contains(res.Output, "  "+v) {
					t.Errorf("the output does not report %s as a violation:\n%s", v, res.Output)
				}
			}
			if strings.Contains(res.Output, "SCOPE_VIOLATION") != (len(violations)+len(tc.reported) > 0) {
				t.Errorf("SCOPE_VIOLATION in the output is %v, want %v:\n%s",
					strings.Contains(res.Output, "SCOPE_VIOLATION"), len(violations) > 0, res.Output)
			}
			for _, v := range violations {
				e.wantViolation(t, res, id, v)
			}
			for _, a := range tc.allows {
				recs := e.records(id, a)
				if len(recs) != 1 || recs[0].Meta.Decision != orchestration.DecisionAllow || atkRanges(recs[0]) == 0 {
					t.Errorf("want one atkAllow record with ranges for %s, got %s", a, atkDump(recs))
				}
			}
			for _, d := range tc.deletes {
				recs := e.records(id, d)
				if len(recs) != 1 || recs[0].Meta.Decision != orchestration.DecisionAllow || recs[0].Meta.Mutation != orchestration.MutationDelete {
					t.Errorf("want one allowed delete record for %s, got %s", d, atkDump(recs))
				}
			}
			if tc.check != nil {
				tc.check(t, e, res)
			}
		})
	}
	t.Run("cmd/without an intent", func(t *testing.T) {
		t.Parallel()
		e := newAtkEnv(t, atkOpts{})
		e.baseline()
		wsBefore := e.wsTree()
		p := e.start()
		e.wantCode("execute_command", p.send("execute_command", map[string]any{"command": "echo x > docs/x.md"}), engine.NoActiveIntent)
		p.close()
		if a, c, r := atkDiff(wsBefore, e.wsTree()); len(a)+len(c)+len(r) > 0 {
			t.Errorf("a refused command changed the workspace: %v %v %v", a, c, r)
		}
	})
}

// atkConfinedRefuses reports whether a command of intent cannot write path
// at all: outside INT-001's root src/, or a governance path.
func atkConfinedRefuses(intent, path string) bool {
	if orchestration.IsGoverned(path) || path == ".mcp.json" {
		return true
	}
	return intent == "INT-001" && !strings.HasPrefix(path, "src/")
}

// atkState describes what is at p: its kind and content or link target.
func atkState(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		return "link to " + t
	case fi.IsDir():
		return "directory"
	}
	b, _ := os.ReadFile(p)
	return fmt.Sprintf("file %q", b)
}

// wantViolation checks that path is reported in the command's output and
// recorded as a violation in the ledger for call id.
func (e *atkEnv) wantViolation(t *testing.T, res resultLine, id, path string) {
	t.Helper()
	if !strings.Contains(res.Output, "SCOPE_VIOLATION") || !strings.Contains(res.Output, "  "+path) {
		t.Errorf("the output does not report %s as a violation:\n%s", path, res.Output)
	}
	recs := e.records(id, path)
	for _, r := range recs {
		if r.Meta.Decision == orchestration.DecisionViolation {
			return
		}
	}
	t.Errorf("no violation record for %s in the ledger; records: %s", path, atkDump(recs))
}

func atkDump(recs []*orchestration.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "[%s %s ranges=%d] ", r.Meta.Decision, r.Meta.Mutation, atkRanges(r))
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func atkContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// bookkeepingTarget puts an outside file without a final newline in place:
// the ledger's torn-tail repair would truncate it.
func bookkeepingTarget(e *atkEnv) { e.writeAbs(e.out+"/target", "outside data, no final newline") }

// TestAttackBookkeepingRedirect: a command replaces part of .orchestration
// with a symlink to outside. The change must be reported, and neither this
// dispatch process (recording the violation) nor the next one may write
// through the symlink.
func TestAttackBookkeepingRedirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, command, reported string }{
		{"ledger", "ln -sf {out}/target .orchestration/agent_trace.jsonl", ".orchestration/agent_trace.jsonl"},
		{"intent map summary", "ln -sf {out}/target .orchestration/intent_map.json", ".orchestration/intent_map.json"},
		{"locks directory", "rm -rf .orchestration/locks && ln -s {out}/dir .orchestration/locks", ".orchestration/locks"},
		{"sessions file", "ln -sf {out}/target .orchestration/sessions/s.json", ""},
		{".orchestration", "mv .orchestration .orch.old && ln -s {out}/dir .orchestration", ".orchestration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAtkEnv(t, atkOpts{})
			bookkeepingTarget(e)
			e.baseline()
			p := e.start()
			p.selectIntent("INT-001")
			p.send("read_file", map[string]any{"path": "src/main.go"})
			res := p.send("execute_command", map[string]any{"command": e.expand(tc.command)})
			p.close()
			// The confined command cannot touch .orchestration: the
			// redirection fails inside it.
			if tc.reported != "" {
				if fi, err := os.Lstat(e.abs(tc.reported)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					t.Errorf("%s was replaced by the command (%v):\n%s", tc.reported, err, res.Output)
				}
				if !strings.Contains(res.Output, "Permission denied") && !strings.Contains(res.Output, "Read-only file system") {
					t.Errorf("the command's output does not show the refused write:\n%s", res.Output)
				}
			}
			e.checkAround()
			p = e.start()
			p.send("select_active_intent", map[string]any{"intent_id": "INT-001"})
			p.send("write_to_file", map[string]any{"path": "src/x.go", "content": "package x\n"})
			p.close()
			e.checkAround()
		})
	}
}

// atkSyncBuffer is a bytes.Buffer a running process may write to while a
// failing test reads it.
type atkSyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *atkSyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *atkSyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *atkSyncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}
