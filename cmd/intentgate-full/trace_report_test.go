package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds headless Chromium (the Debian package chromium, which
// .ci/run installs). Without it the test skips, except in CI (CI=true),
// where the report must be checked.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed, and CI=true: the HTML report must be rendered in CI (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (/usr/bin/chromium): the HTML report is not rendered; apt-get install -y chromium to run this test")
	return ""
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// The HTML report, rendered by a real browser: the verdict at the top, the
// intents with scope and status, the files they changed, the timeline with
// changes and denials; no external resource. The screenshot is kept.
func TestTraceReportInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "vendor/model-one", selectCall,
		writeCall("src/auth/login.go", "package auth\n\nfunc Login() {}\n"),
		"!"+writeCall("docs/notes.md", "not in scope\n"),
		readCall("src/auth/login.go"), writeCall("src/auth/login.go", "package auth\n\nfunc Login() error { return nil }\n"))
	if _, code := runIG(t, "trace", "seal", "-w", ws); code != 0 {
		t.Fatal("seal failed")
	}
	report := filepath.Join(t.TempDir(), "report.html")
	if out, code := runIG(t, "trace", "report", "-w", ws, "-o", report); code != 0 || !strings.Contains(out, "INTACT") {
		t.Fatalf("report: exit %d\n%s", code, out)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing is loaded from anywhere.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|<script|<link|@import|url\(`).Find(html); m != nil {
		t.Errorf("report references an external resource or script: %q", m)
	}

	dom := string(runChromium(t, bin, "--dump-dom", "file://"+filepath.ToSlash(report)))
	for _, want := range []string{
		`id="verdict" class="intact"`, ">INTACT<", "Checkpoints: 1 sealed", "holds",
		`data-intent="INT-001"`, "auth", "IN_PROGRESS", "src/**", `data-intent="INT-009"`, "PENDING", "docs/**",
		"src/auth/login.go", "SCOPE_VIOLATION", "vendor/model-one", `id="timeline"`, "denied", "create", "modify",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered report lacks %q", want)
		}
	}
	if strings.Index(dom, `id="verdict"`) > strings.Index(dom, `id="intents"`) {
		t.Error("the verdict is not at the top")
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1280,2000", "file://"+filepath.ToSlash(report))
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 || colours(img) < 8 {
		t.Errorf("screenshot is %v with %d colours; want 1280x2000 and a rendered page", b, colours(img))
	}
	t.Logf("screenshot: %s", shot)
	if dir := os.Getenv("INTENTGATE_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for src, name := range map[string]string{shot: "trace-report.png", report: "trace-report.html"} {
			if err := copyFile(src, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("artifacts copied to %s", dir)
	}

	// A tampered ledger says so at the top.
	ledger := filepath.Join(ws, ".orchestration", "agent_trace.jsonl")
	b, _ := os.ReadFile(ledger)
	if err := os.WriteFile(ledger, bytes.Replace(b, []byte(`"session":"s1"`), []byte(`"session":"s9"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runIG(t, "trace", "report", "-w", ws, "-o", report); code != 0 || !strings.Contains(out, "NOT INTACT") {
		t.Fatalf("report of a tampered ledger: exit %d\n%s", code, out)
	}
	dom = string(runChromium(t, bin, "--dump-dom", "file://"+filepath.ToSlash(report)))
	if !strings.Contains(dom, `class="tampered"`) || !strings.Contains(dom, "NOT INTACT") || !strings.Contains(dom, "line 1: edit") {
		t.Errorf("tampered report does not lead with the verdict:\n%.2000s", dom)
	}
}

func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
