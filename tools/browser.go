package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/intentgate/intentgate/engine"
)

// BrowserActionResult is what each browser action returns, Roo Code's
// shape: a screenshot (a data URL, sent to the model as an image), the
// console output since the action started, the page's URL and where the
// mouse is.
type BrowserActionResult struct {
	Screenshot           string `json:"screenshot,omitempty"`
	Logs                 string `json:"logs,omitempty"`
	CurrentURL           string `json:"currentUrl,omitempty"`
	CurrentMousePosition string `json:"currentMousePosition,omitempty"`
}

// DefaultAllowedHosts are the hosts a browser may reach when config.yaml
// names none: this machine only.
var DefaultAllowedHosts = []string{"localhost", "127.0.0.1", "::1"}

// BrowserOptions configure browser_action.
type BrowserOptions struct {
	// Chromium is the browser binary; /usr/bin/chromium, then chromium,
	// chromium-browser or google-chrome on PATH, when empty.
	Chromium string
	// Viewport is the window size, "900x600" (Roo's default) when empty.
	Viewport string
	// AllowedHosts replaces config.yaml's browser.allowed_hosts (tests).
	AllowedHosts []string
	// Idle closes a browser left unused this long; 10 minutes when 0.
	Idle time.Duration
}

// Browser is browser_action: one headless Chromium per session, driven over
// the DevTools protocol. The browser closes on any error, on close, when
// left idle, and when the agent ends the task (Close).
type Browser struct {
	opts BrowserOptions

	mu       sync.Mutex
	sessions map[string]*browserSession
}

// BrowserAction returns the browser_action tool.
func BrowserAction(opts BrowserOptions) *Browser {
	if opts.Viewport == "" {
		opts.Viewport = "900x600"
	}
	if opts.Idle <= 0 {
		opts.Idle = 10 * time.Minute
	}
	return &Browser{opts: opts, sessions: map[string]*browserSession{}}
}

type browserSession struct {
	allocCancel context.CancelFunc
	cancel      context.CancelFunc
	ctx         context.Context
	dataDir     string
	allowed     []string
	mouse       string
	idle        *time.Timer

	logMu sync.Mutex
	logs  []string
}

// Close ends session's browser, if it has one (the agent calls it at the
// end of a task).
func (b *Browser) Close(session string) {
	b.mu.Lock()
	s := b.sessions[session]
	delete(b.sessions, session)
	b.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// CloseAll ends every browser.
func (b *Browser) CloseAll() {
	b.mu.Lock()
	all := b.sessions
	b.sessions = map[string]*browserSession{}
	b.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

func (s *browserSession) close() {
	if s.idle != nil {
		s.idle.Stop()
	}
	s.cancel()
	s.allocCancel()
	if s.dataDir != "" {
		_ = os.RemoveAll(s.dataDir)
	}
}

var browserActions = map[string]bool{"launch": true, "click": true, "hover": true, "type": true,
	"scroll_down": true, "scroll_up": true, "resize": true, "close": true}

// Run performs one action.
func (b *Browser) Run(ctx context.Context, c *engine.Call) (*engine.Result, error) {
	action, err := c.Require("action")
	if err != nil {
		return nil, err
	}
	if !browserActions[action] {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "action",
			Message: fmt.Sprintf("unknown browser action %q", action),
			Hint:    "use one of launch, click, hover, type, scroll_down, scroll_up, resize, close"}
	}
	if action == "close" {
		b.Close(c.Session)
		return &engine.Result{Output: "The browser has been closed. You may now proceed to using other tools."}, nil
	}
	var arg string
	switch action {
	case "launch":
		arg, err = c.Require("url")
	case "click", "hover":
		arg, err = c.Require("coordinate")
	case "type":
		arg, err = c.Require("text")
	case "resize":
		arg, err = c.Require("size")
	}
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	s := b.sessions[c.Session]
	b.mu.Unlock()
	if action == "launch" {
		allowed := b.opts.AllowedHosts
		if allowed == nil {
			cfg, err := loadToolConfig(c.WS)
			if err != nil {
				return nil, err
			}
			allowed = cfg.Browser.AllowedHosts
			if len(allowed) == 0 {
				allowed = DefaultAllowedHosts
			}
		}
		if err := checkBrowserURL(arg, allowed); err != nil {
			err.Tool = c.Tool
			return nil, err
		}
		if s == nil {
			if s, err = b.start(c.Session, allowed); err != nil {
				return nil, err
			}
		}
	} else if s == nil {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "action",
			Message: "no browser is open in this session",
			Hint:    `start one with {"action":"launch","url":"http://localhost:3000"} first`}
	}
	if s.idle != nil {
		s.idle.Reset(b.opts.Idle)
	}
	res, err := s.do(ctx, action, arg)
	if err != nil {
		// As in Roo Code, any error ends the browser session.
		b.Close(c.Session)
		if d, ok := engine.AsDenial(err); ok {
			d.Tool = c.Tool
			return nil, d
		}
		return nil, fmt.Errorf("browser_action %s: %w (the browser was closed; launch it again)", action, err)
	}
	logs := res.Logs
	if logs == "" {
		logs = "(No new logs)"
	}
	out := "The browser action has been executed. The console logs and screenshot have been captured for your analysis.\n\nConsole logs:\n" +
		logs + "\n\n(REMEMBER: if you need to proceed to using non-`browser_action` tools or launch a new browser, you MUST first close the browser. " +
		"For example, if after analyzing the logs and screenshot you need to edit a file, you must first close the browser before you can use the write_to_file tool.)"
	return &engine.Result{Output: out, Data: map[string]any{
		"browser_action_result": res,
		"images":                []string{res.Screenshot},
	}}, nil
}

// checkBrowserURL refuses what a browser must not open: anything but http
// and https (file:, data:, javascript:, chrome:...), and hosts outside the
// allow-list. A pattern is a host name, an IP address or "*.domain".
func checkBrowserURL(raw string, allowed []string) *engine.Denial {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &engine.Denial{Code: engine.InvalidArgument, Parameter: "url",
			Message: fmt.Sprintf("%q is not an http or https URL; the browser opens only web pages", raw),
			Hint:    "give a full URL such as http://localhost:3000; to read a file use read_file"}
	}
	if !hostAllowed(u.Hostname(), allowed) {
		return &engine.Denial{Code: engine.InvalidArgument, Parameter: "url",
			Message: fmt.Sprintf("the host %s is not in browser.allowed_hosts of %s (%s)", u.Hostname(), configPath, strings.Join(allowed, ", ")),
			Hint:    "open a page on an allowed host (by default only this machine: localhost), or ask a person to add the host to browser.allowed_hosts"}
	}
	return nil
}

func hostAllowed(host string, allowed []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(a)), ".")
		a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
		switch {
		case a == "":
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(host, a[1:]) && net.ParseIP(host) == nil {
				return true
			}
		case a == host:
			return true
		default:
			if ip, aip := net.ParseIP(host), net.ParseIP(a); ip != nil && aip != nil && ip.Equal(aip) {
				return true
			}
		}
	}
	return false
}

// chromiumPath finds the browser.
func (b *Browser) chromiumPath() (string, error) {
	if b.opts.Chromium != "" {
		return b.opts.Chromium, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install it (Debian: apt-get install chromium) to use browser_action")
}

func parseSize(s string) (int64, int64, bool) {
	w, h, ok := strings.Cut(strings.TrimSpace(s), "x")
	wi, err1 := strconv.ParseInt(strings.TrimSpace(w), 10, 64)
	hi, err2 := strconv.ParseInt(strings.TrimSpace(h), 10, 64)
	if !ok || err1 != nil || err2 != nil || wi < 100 || hi < 100 || wi > 4096 || hi > 4096 {
		return 0, 0, false
	}
	return wi, hi, true
}

func parseCoordinate(s string) (float64, float64, bool) {
	x, y, ok := strings.Cut(strings.TrimSpace(s), ",")
	xi, err1 := strconv.ParseFloat(strings.TrimSpace(x), 64)
	yi, err2 := strconv.ParseFloat(strings.TrimSpace(y), 64)
	if !ok || err1 != nil || err2 != nil || xi < 0 || yi < 0 || xi > 10000 || yi > 10000 {
		return 0, 0, false
	}
	return xi, yi, true
}

func (b *Browser) start(session string, allowed []string) (*browserSession, error) {
	bin, err := b.chromiumPath()
	if err != nil {
		return nil, err
	}
	w, h, ok := parseSize(b.opts.Viewport)
	if !ok {
		return nil, fmt.Errorf("viewport %q is not WIDTHxHEIGHT", b.opts.Viewport)
	}
	dataDir, err := os.MkdirTemp("", "intentgate-browser-")
	if err != nil {
		return nil, err
	}
	// Names outside the allow-list do not resolve at all; IP literals,
	// which bypass the resolver, are stopped by request interception.
	rules := "MAP * ~NOTFOUND"
	for _, a := range allowed {
		if a = strings.TrimSpace(a); a != "" {
			rules += ", EXCLUDE " + a
		}
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		// One renderer process for every site: a navigation to another
		// origin does not swap the page out from under the session.
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
		chromedp.Flag("host-resolver-rules", rules),
		chromedp.UserDataDir(dataDir),
		chromedp.WindowSize(int(w), int(h)),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	s := &browserSession{allocCancel: acancel, cancel: cancel, ctx: ctx, dataDir: dataDir, allowed: allowed}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, remoteText(a))
			}
			text := strings.Join(parts, " ")
			if e.Type != runtime.APITypeLog {
				text = fmt.Sprintf("[%s] %s", e.Type, text)
			}
			s.log(text)
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg = d.Exception.Description
			}
			s.log("[Page Error] " + msg)
		case *fetch.EventRequestPaused:
			go s.filter(e)
		}
	})
	// The first Run starts the browser and ties it to the context it is
	// given, so it gets the session's own, with the time limit kept apart.
	started := make(chan error, 1)
	go func() {
		started <- chromedp.Run(ctx,
			fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*"}}),
			runtime.Enable(),
			emulation.SetDeviceMetricsOverride(w, h, 1, false),
		)
	}()
	var err2 error
	select {
	case err2 = <-started:
	case <-time.After(30 * time.Second):
		err2 = errors.New("it did not answer within 30 seconds")
	}
	if err2 != nil {
		s.close()
		return nil, fmt.Errorf("starting %s: %w", bin, err2)
	}
	s.idle = time.AfterFunc(b.opts.Idle, func() { b.Close(session) })
	b.mu.Lock()
	b.sessions[session] = s
	b.mu.Unlock()
	return s, nil
}

// filter lets through the requests to allowed hosts and fails the others,
// whatever started them (a link, a redirect, a script, an image).
func (s *browserSession) filter(e *fetch.EventRequestPaused) {
	c := chromedp.FromContext(s.ctx)
	if c == nil || c.Target == nil {
		return
	}
	ex := cdp.WithExecutor(s.ctx, c.Target)
	u, err := url.Parse(e.Request.URL)
	ok := err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ws" || u.Scheme == "wss") && hostAllowed(u.Hostname(), s.allowed)
	if ok {
		_ = fetch.ContinueRequest(e.RequestID).Do(ex)
		return
	}
	s.log(fmt.Sprintf("[blocked] %s: the host is not in browser.allowed_hosts", e.Request.URL))
	// Answered here, not failed: a failed navigation swaps the page for
	// Chromium's error page in another process, and the session loses it.
	body := "<!doctype html><title>Blocked</title><p>intentgate blocked this request: the host is not in browser.allowed_hosts of " + configPath + ".</p>"
	err = fetch.FulfillRequest(e.RequestID, http.StatusForbidden).
		WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}}).
		WithBody(base64.StdEncoding.EncodeToString([]byte(body))).Do(ex)
	if err != nil {
		_ = fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(ex)
	}
}

func (s *browserSession) log(line string) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if len(s.logs) < 1000 {
		s.logs = append(s.logs, line)
	}
}

func (s *browserSession) takeLogs() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := strings.Join(s.logs, "\n")
	s.logs = nil
	return out
}

func remoteText(o *runtime.RemoteObject) string {
	if len(o.Value) > 0 {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
		return string(o.Value)
	}
	if o.Description != "" {
		return o.Description
	}
	return string(o.Type)
}

// do performs the action, lets the page settle, and captures the result.
func (s *browserSession) do(ctx context.Context, action, arg string) (BrowserActionResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// The action runs in the browser's context, bounded by the call's.
	run := func(actions ...chromedp.Action) error {
		done := make(chan error, 1)
		go func() { done <- chromedp.Run(s.ctx, actions...) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.takeLogs() // what came before this action is not its output
	var err error
	switch action {
	case "launch":
		err = run(chromedp.Navigate(strings.TrimSpace(arg)))
	case "click", "hover":
		x, y, ok := parseCoordinate(arg)
		if !ok {
			return BrowserActionResult{}, &engine.Denial{Code: engine.InvalidArgument, Parameter: "coordinate",
				Message: fmt.Sprintf("coordinate %q is not x,y", arg), Hint: `give the point as "450,300", within the viewport`}
		}
		if action == "click" {
			err = run(chromedp.MouseClickXY(x, y))
		} else {
			err = run(chromedp.MouseEvent(input.MouseMoved, x, y))
		}
		s.mouse = arg
	case "type":
		err = run(chromedp.KeyEvent(arg))
	case "scroll_down":
		err = run(chromedp.Evaluate(`window.scrollBy({top: window.innerHeight, behavior: "instant"})`, nil))
	case "scroll_up":
		err = run(chromedp.Evaluate(`window.scrollBy({top: -window.innerHeight, behavior: "instant"})`, nil))
	case "resize":
		w, h, ok := parseSize(arg)
		if !ok {
			return BrowserActionResult{}, &engine.Denial{Code: engine.InvalidArgument, Parameter: "size",
				Message: fmt.Sprintf("size %q is not WIDTHxHEIGHT between 100 and 4096", arg), Hint: `e.g. "1280x800"`}
		}
		err = run(emulation.SetDeviceMetricsOverride(w, h, 1, false))
	}
	if err != nil {
		return BrowserActionResult{}, err
	}
	s.settle(ctx)
	var shot []byte
	var loc string
	capture := func() error {
		return run(
			chromedp.ActionFunc(func(ctx context.Context) error {
				var err error
				shot, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).Do(ctx)
				return err
			}),
			chromedp.Location(&loc),
		)
	}
	// A page in the middle of a navigation has no frame to capture for a
	// moment: try again before giving up.
	for try := 0; ; try++ {
		err := capture()
		if err == nil {
			break
		}
		if try == 5 || ctx.Err() != nil {
			return BrowserActionResult{}, err
		}
		time.Sleep(300 * time.Millisecond)
	}
	return BrowserActionResult{
		Screenshot:           "data:image/png;base64," + base64.StdEncoding.EncodeToString(shot),
		Logs:                 s.takeLogs(),
		CurrentURL:           loc,
		CurrentMousePosition: s.mouse,
	}, nil
}

// settle waits, as Roo does, until the console has been quiet for half a
// second, three seconds at most.
func (s *browserSession) settle(ctx context.Context) {
	deadline := time.Now().Add(3 * time.Second)
	last, count := time.Now(), -1
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.logMu.Lock()
		n := len(s.logs)
		s.logMu.Unlock()
		if n != count {
			count, last = n, time.Now()
		} else if time.Since(last) >= 500*time.Millisecond {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
