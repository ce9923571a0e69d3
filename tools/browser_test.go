package tools

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// needChromium skips outside CI when no browser is installed, and fails
// under CI=true, where .ci/run installs one.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := (&Browser{}).chromiumPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
}

const browserPage = `<!doctype html><html><head><style>
body { margin: 0; background: #fff; font: 16px sans-serif; }
#go { position: absolute; left: 10px; top: 10px; width: 200px; height: 50px; }
#name { position: absolute; left: 10px; top: 80px; width: 200px; height: 30px; }
#tall { height: 3000px; }
</style></head><body>
<button id="go" onclick="document.body.style.background='#c00'; document.getElementById('msg').textContent='clicked!'; console.log('button clicked')">Go</button>
<input id="name" oninput="console.log('typed: ' + this.value)">
<p id="msg" style="position:absolute; top: 120px; left: 10px">waiting</p>
<a id="away" href="http://127.0.0.2:%d/steal" style="position:absolute; left:10px; top:160px">away</a>
<div id="tall"></div>
<script>
console.warn('page ready');
window.addEventListener('scroll', () => console.log('scrolled to ' + window.scrollY));
</script></body></html>`

func TestBrowserAction(t *testing.T) {
	needChromium(t)
	var stolen atomic.Int64
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
	}))
	// A second loopback address stands for a host outside the allow-list.
	if l, err := netListen("127.0.0.2:0"); err == nil {
		evil.Listener = l
		evil.Start()
		defer evil.Close()
	}
	evilPort := 1
	if evil.Listener != nil {
		evilPort = evil.Listener.Addr().(*netTCPAddr).Port
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, browserPage, evilPort)
	}))
	defer srv.Close()

	ws := rtWorkspace(t, map[string]string{"a.txt": "a\n"})
	b := BrowserAction(BrowserOptions{})
	defer b.CloseAll()
	act := func(args map[string]any) (BrowserActionResult, string) {
		t.Helper()
		r, err := rtRun(t, ws, b, "browser_action", args)
		if err != nil {
			t.Fatalf("browser_action %v: %v", args, err)
		}
		res := r.Data["browser_action_result"].(BrowserActionResult)
		if imgs := r.Data["images"].([]string); len(imgs) != 1 || imgs[0] != res.Screenshot {
			t.Errorf("the screenshot is not among the result's images")
		}
		return res, r.Output
	}
	decode := func(res BrowserActionResult) []byte {
		t.Helper()
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(res.Screenshot, "data:image/png;base64,"))
		if err != nil || !strings.HasPrefix(res.Screenshot, "data:image/png;base64,") {
			t.Fatalf("screenshot is not a PNG data URL: %.40s", res.Screenshot)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if img.Bounds().Dx() != 900 || img.Bounds().Dy() != 600 {
			t.Errorf("screenshot is %v, want the 900x600 viewport", img.Bounds())
		}
		return raw
	}

	launched, out := act(map[string]any{"action": "launch", "url": srv.URL + "/"})
	if launched.CurrentURL != srv.URL+"/" || !strings.Contains(launched.Logs, "[warning] page ready") {
		t.Errorf("launch = url %q logs %q", launched.CurrentURL, launched.Logs)
	}
	if !strings.HasPrefix(out, "The browser action has been executed. The console logs and screenshot have been captured for your analysis.\n\nConsole logs:\n") {
		t.Errorf("launch output = %q", out)
	}
	before := decode(launched)

	clicked, _ := act(map[string]any{"action": "click", "coordinate": "100,35"})
	if clicked.Logs != "button clicked" || clicked.CurrentMousePosition != "100,35" {
		t.Errorf("click: logs %q, mouse %q", clicked.Logs, clicked.CurrentMousePosition)
	}
	if bytes.Equal(decode(clicked), before) {
		t.Error("the screenshot did not change after the click turned the page red")
	}
	act(map[string]any{"action": "click", "coordinate": "50,95"})
	typed, _ := act(map[string]any{"action": "type", "text": "hi"})
	if !strings.Contains(typed.Logs, "typed: hi") {
		t.Errorf("type: logs %q", typed.Logs)
	}
	scrolled, _ := act(map[string]any{"action": "scroll_down"})
	if !strings.Contains(scrolled.Logs, "scrolled to 600") {
		t.Errorf("scroll_down: logs %q", scrolled.Logs)
	}
	up, _ := act(map[string]any{"action": "scroll_up"})
	if !strings.Contains(up.Logs, "scrolled to 0") {
		t.Errorf("scroll_up: logs %q", up.Logs)
	}
	hovered, out := act(map[string]any{"action": "hover", "coordinate": "5,5"})
	if hovered.CurrentMousePosition != "5,5" || !strings.Contains(out, "Console logs:\n(No new logs)") {
		t.Errorf("hover: mouse %q, output %q", hovered.CurrentMousePosition, out)
	}

	// A link to a host outside the allow-list is followed by nothing.
	if evil.Listener != nil {
		away, _ := act(map[string]any{"action": "click", "coordinate": "20,168"})
		if stolen.Load() != 0 {
			t.Errorf("the browser reached a host outside the allow-list (%d requests)", stolen.Load())
		}
		if !strings.Contains(away.Logs, "[blocked] http://127.0.0.2") {
			t.Errorf("the blocked request is not in the logs: %q", away.Logs)
		}
	}

	resized, _ := act(map[string]any{"action": "resize", "size": "1200x800"})
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(resized.Screenshot, "data:image/png;base64,"))
	if img, err := png.Decode(bytes.NewReader(raw)); err != nil || img.Bounds().Dx() != 1200 || img.Bounds().Dy() != 800 {
		t.Errorf("after resize the screenshot is not 1200x800 (%v)", err)
	}
	// An error closes the browser, as in Roo Code.
	if _, err := rtRun(t, ws, b, "browser_action", map[string]any{"action": "click", "coordinate": "left"}); rtCode(err) != engine.InvalidArgument {
		t.Errorf("click at %q: %v, want INVALID_ARGUMENT", "left", err)
	}
	if _, err := rtRun(t, ws, b, "browser_action", map[string]any{"action": "scroll_down"}); err == nil || !strings.Contains(err.Error(), "no browser is open") {
		t.Errorf("after an error: %v, want no browser open", err)
	}
	act(map[string]any{"action": "launch", "url": srv.URL + "/"})
	r, err := rtRun(t, ws, b, "browser_action", map[string]any{"action": "close"})
	if err != nil || r.Output != "The browser has been closed. You may now proceed to using other tools." {
		t.Errorf("close: %v %v", r, err)
	}
	if _, err := rtRun(t, ws, b, "browser_action", map[string]any{"action": "click", "coordinate": "1,1"}); rtCode(err) != engine.InvalidArgument {
		t.Errorf("click after close: %v, want INVALID_ARGUMENT (no browser)", err)
	}
}

func TestBrowserActionRefuses(t *testing.T) {
	ws := rtWorkspace(t, map[string]string{".orchestration/config.yaml": "browser:\n  allowed_hosts: [localhost, \"*.dev.test\"]\n"})
	b := BrowserAction(BrowserOptions{Chromium: "/nonexistent/chromium"})
	defer b.CloseAll()
	for _, tc := range []struct {
		args  map[string]any
		code  engine.Code
		param string
	}{
		{map[string]any{"action": "launch", "url": "file:///etc/passwd"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "javascript:alert(1)"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "data:text/html,<h1>x</h1>"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "chrome://settings"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "https://example.com/"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "http://localhost@example.com/"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch", "url": "http://127.0.0.1:8080/"}, engine.InvalidArgument, "url"}, // not in this workspace's list
		{map[string]any{"action": "launch", "url": "http://dev.test.evil.com/"}, engine.InvalidArgument, "url"},
		{map[string]any{"action": "launch"}, engine.MissingParameter, "url"},
		{map[string]any{"action": "click"}, engine.MissingParameter, "coordinate"},
		{map[string]any{"action": "fly"}, engine.InvalidArgument, "action"},
		{map[string]any{}, engine.MissingParameter, "action"},
		{map[string]any{"action": "scroll_down"}, engine.InvalidArgument, "action"},
	} {
		_, err := rtRun(t, ws, b, "browser_action", tc.args)
		d, ok := engine.AsDenial(err)
		if !ok || d.Code != tc.code || d.Parameter != tc.param {
			t.Errorf("browser_action %v = %v, want %s on %s", tc.args, err, tc.code, tc.param)
		}
	}
	// Allowed hosts pass the check (and then fail for want of a browser).
	for _, u := range []string{"http://localhost:3000/", "https://app.dev.test/x", "http://LOCALHOST./"} {
		_, err := rtRun(t, ws, b, "browser_action", map[string]any{"action": "launch", "url": u})
		if _, denied := engine.AsDenial(err); denied || err == nil {
			t.Errorf("launch %s = %v, want it allowed and then failing to start the browser", u, err)
		}
	}
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "0:0:0:0:0:0:0:1": true,
		"127.0.0.2": false, "example.com": false, "localhost.example.com": false, "": false} {
		if got := hostAllowed(host, DefaultAllowedHosts); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

var netListen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

type netTCPAddr = net.TCPAddr
