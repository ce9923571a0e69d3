package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// intentgate builds the intentgate binary (with intentgate-full beside it)
// once per run, unless
// INTENTGATE_BENCH_BIN names one to measure instead (an older build, to
// compare before and after).
func intentgate(b *testing.B) string {
	b.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("INTENTGATE_BENCH_BIN"); p != "" {
			builtBin = p
			return
		}
		dir, err := os.MkdirTemp("", "intentgate-bench-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "intentgate")
		// intentgate runs intentgate-full, beside it, for every command
		// but hook.
		for _, name := range []string{"intentgate", "intentgate-full"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = &buildError{err, out}
				return
			}
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return builtBin
}

var (
	hookOnce sync.Once
	hookBin  string
	hookErr  error
)

// intentgateHook is the lean hook program, cmd/intentgate-hook: the one
// beside INTENTGATE_BENCH_BIN when that names a build, else built once per
// run. A build from before the program existed has none: the lean cases
// are then skipped.
func intentgateHook(b *testing.B) string {
	b.Helper()
	hookOnce.Do(func() {
		if p := os.Getenv("INTENTGATE_BENCH_BIN"); p != "" {
			hookBin = filepath.Join(filepath.Dir(p), "intentgate-hook")
			if _, err := os.Stat(hookBin); err != nil {
				hookErr = fmt.Errorf("no intentgate-hook beside %s", p)
			}
			return
		}
		dir, err := os.MkdirTemp("", "intentgate-bench-")
		if err != nil {
			hookErr = err
			return
		}
		hookBin = filepath.Join(dir, "intentgate-hook")
		cmd := exec.Command("go", "build", "-o", hookBin, "./cmd/intentgate-hook")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			hookErr = &buildError{err, out}
		}
	})
	if hookErr != nil {
		b.Skip(hookErr)
	}
	return hookBin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

const intents = `active_intents:
  - id: INT-001
    name: bench
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

// workspace makes a governed git workspace with a session that has selected
// INT-001.
func workspace(b *testing.B, session string) string {
	b.Helper()
	ws := b.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v\n%s", err, out)
		}
	}
	for name, body := range map[string]string{
		".orchestration/active_intents.yaml": intents,
		"src/app.txt":                        "package app\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if session != "" {
		out, err := exec.Command(intentgate(b), "intent", "use", "INT-001", "--session", session, "-w", ws).CombinedOutput()
		if err != nil {
			b.Fatalf("intent use: %v\n%s", err, out)
		}
	}
	return ws
}

// daemon is a running `intentgate serve`.
type daemon struct {
	cmd *exec.Cmd
	url string
}

func startDaemon(b *testing.B, ws string) *daemon {
	b.Helper()
	cmd := exec.Command(intentgate(b), "serve", "-w", ws, "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, out)
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		b.Fatal("intentgate serve did not start")
	}
	var info struct{ URL string }
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		cmd.Process.Kill()
		b.Fatalf("serve printed %q: %v", line, err)
	}
	d := &daemon{cmd: cmd, url: info.URL}
	b.Cleanup(func() {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			cmd.Process.Kill()
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
		}
	})
	return d
}

// nodeModules returns bench/node when `npm ci` has been run there.
func nodeModules(b *testing.B, pkg string) (node, dir string) {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	dir, _ = filepath.Abs("node")
	if pkg != "" {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			b.Skipf("%s is not installed: run `npm ci` in bench/node", pkg)
		}
	}
	return node, dir
}
