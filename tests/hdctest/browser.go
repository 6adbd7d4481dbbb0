package hdctest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// updateScreenshots asks Check to write its screenshots into docs/console,
// as golden files are updated: go test ./tests/console -update. Without
// it they go to the test's temporary folder, so that a run changes no
// tracked file.
var updateScreenshots = flag.Bool("update", false, "write the console's screenshots into docs/console")

// Browser is a headless Chromium tab, the errors its console showed, and
// where its screenshots go.
type Browser struct {
	t    testing.TB
	ctx  context.Context
	Base string // the console's http://127.0.0.1:port

	mu     sync.Mutex
	errors []string
}

// chromium is Debian's headless Chromium, which scripts/test.sh installs.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: apt-get install chromium (scripts/test.sh does)")
	return ""
}

// NewBrowser starts a headless Chromium for the console at login (its
// URL with the one-time token) and signs in.
func NewBrowser(t *testing.T, login string) *Browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("headless", "new"), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &Browser{t: t, ctx: ctx, Base: strings.SplitN(login, "/login", 2)[0]}
	if err := chromedp.Do(ctx); err != nil { // the tab opens, and with it the browser's log
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.listen); err != nil {
		t.Fatal(err)
	}
	b.Run(chromedp.Navigate(login), chromedp.WaitVisible(chromedp.CSS("main h1")))
	return b
}

// listen notes what the browser's console shows as an error: an uncaught
// exception, console.error, and the browser's own errors (a refused
// script, a resource that failed to load, a violated policy).
func (b *Browser) listen(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + e.ExceptionDetails.Text
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			msg = "console.error"
		}
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError {
			msg = string(e.Entry.Source) + ": " + e.Entry.Text + " " + e.Entry.URL
		}
	}
	if msg != "" {
		b.mu.Lock()
		b.errors = append(b.errors, msg)
		b.mu.Unlock()
	}
}

// Run runs steps in the tab, failing the test on an error; each step
// has a minute.
func (b *Browser) Run(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	get(b, chromedp.Steps(steps...))
}

// get runs a in the tab and returns its value, failing the test on an
// error.
func get[T any](b *Browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("the browser: %v", err)
	}
	return v
}

// Open navigates to path and waits for its heading.
func (b *Browser) Open(path string) {
	b.t.Helper()
	b.Run(chromedp.Navigate(b.Base+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// Reload reloads the page, as the browser's reload button does, and waits
// for its heading.
func (b *Browser) Reload() {
	b.t.Helper()
	b.Run(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// Press focuses the element sel and presses Enter on it, as a person at
// the keyboard does, which loads a page, then waits for the new page's
// element next.
func (b *Browser) Press(sel, next string) {
	b.t.Helper()
	b.markPage()
	b.Run(chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent(kb.Enter))
	b.waitNewPage(next)
}

// Submit clicks the element sel, which loads a page, then waits for the
// new page's element next: never the page it left, which may have one
// too.
func (b *Browser) Submit(sel, next string) {
	b.t.Helper()
	b.markPage()
	b.Run(chromedp.Click(chromedp.CSS(sel)))
	b.waitNewPage(next)
}

// markPage marks the page shown, so that waitNewPage tells the next one
// from it.
func (b *Browser) markPage() {
	b.t.Helper()
	get(b, chromedp.Evaluate[bool](`window.hdcLeft = true`))
}

// waitNewPage waits for a page that markPage did not mark, then for its
// element next.
func (b *Browser) waitNewPage(next string) {
	b.t.Helper()
	testkit.Eventually(b.t, time.Minute, "the browser to leave the page", func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		left, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.hdcLeft !== true`))
		return err == nil && left // an error: the page is being replaced
	})
	b.Run(chromedp.WaitVisible(chromedp.CSS(next)))
}

// Count returns how many elements sel matches.
func (b *Browser) Count(sel string) int {
	b.t.Helper()
	return get(b, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
}

// Text returns the text of the element sel.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(get(b, chromedp.Text(chromedp.CSS(sel))))
}

// Attr returns the attribute name of the element sel.
func (b *Browser) Attr(sel, name string) string {
	b.t.Helper()
	return get(b, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).getAttribute(`+strconv.Quote(name)+`)`))
}

// Check holds the page open to axe-core (no violation of impact serious or
// critical) and to the console's errors (none since the last check),
// takes its screenshot when name is set (screenshot), and holds it to its
// layout at a phone's width and a laptop's (checkLayout).
func (b *Browser) Check(name string) {
	b.t.Helper()
	b.check(name, "")
}

// CheckProblem is Check of a problem page, whose document the console
// answered with status: the browser's one error for it, that status, is
// expected.
func (b *Browser) CheckProblem(status int) {
	b.t.Helper()
	b.check("", "the server responded with a status of "+strconv.Itoa(status)+" ")
}

// check is Check, but for the browser's errors that hold expected.
func (b *Browser) check(name, expected string) {
	b.t.Helper()
	src, err := os.ReadFile(filepath.Join(RepoRoot, "tests", "interop", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		b.t.Fatalf("axe-core (npm ci in tests/interop): %v", err)
	}
	get(b, chromedp.Evaluate[bool](string(src)+"\n;true"))
	violations := get(b, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`,
		chromedp.EvalAwaitPromise))
	url := get(b, chromedp.Location())
	for _, v := range violations {
		b.t.Errorf("axe-core on %s: %s", url, v)
	}
	b.mu.Lock()
	errs := b.errors
	b.errors = nil
	b.mu.Unlock()
	for _, e := range errs {
		if expected == "" || !strings.Contains(e, expected) {
			b.t.Errorf("the browser's console on %s: %s", url, e)
		}
	}
	if name != "" {
		b.screenshot(name)
	}
	b.checkLayout(url)
}

// screenshot takes the page's screenshot at the window's size into
// docs/console/<name>.png with -update, else into the test's temporary
// folder.
func (b *Browser) screenshot(name string) {
	b.t.Helper()
	png := get(b, chromedp.FullScreenshot(100))
	dir := b.t.TempDir()
	if *updateScreenshots {
		dir = filepath.Join(RepoRoot, "docs", "console")
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// Download clicks the link sel, whose answer is a file to save, and
// returns the file's name and content once the browser saved it whole, in
// a folder of the test's own.
func (b *Browser) Download(sel string) (string, []byte) {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior,
		cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		b.t.Fatalf("the browser's downloads: %v", err)
	}
	b.Run(chromedp.Click(chromedp.CSS(sel)))
	var name string
	testkit.Eventually(b.t, time.Minute, "the browser to save the download of "+sel, func() bool {
		files, _ := os.ReadDir(dir)
		if len(files) != 1 || strings.HasSuffix(files[0].Name(), ".crdownload") {
			return false
		}
		name = files[0].Name()
		return true
	})
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		b.t.Fatal(err)
	}
	return name, data
}

// Changes returns what on the page could change something: forms that
// post, and buttons but the copy buttons.
func (b *Browser) Changes() []string {
	b.t.Helper()
	return get(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('form[method="post"], button:not(.copy):not([type="submit"]), form[method="post"] button')]
		.map(e => e.outerHTML.slice(0, 120))`))
}

// StartConsole runs hdc console as the person name of the stack's hop
// directory, against the stack's Admin API, with the flags more, and
// returns its login URL.
func StartConsole(t *testing.T, s *Stack, name string, more ...string) string {
	t.Helper()
	return StartConsoleArgs(t, s, append([]string{"console", "--listen", "127.0.0.1:0", "--admin", s.Internal,
		"--cert", filepath.Join(s.Hop, name+".pem"), "--key", filepath.Join(s.Hop, name+"-key.pem"),
		"--ca", filepath.Join(s.Hop, "ca.pem"), "--data", t.TempDir()}, more...)...)
}

// StartConsoleArgs runs hdc with args, a console command line, as a
// process of s, and returns the login URL it prints.
func StartConsoleArgs(t *testing.T, s *Stack, args ...string) string {
	t.Helper()
	p := s.Start("hdc console", Binary(t, "hdc"), args, nil)
	var login string
	s.WaitFor("hdc console's login URL", func() bool {
		login = loginURL.FindString(p.Out.String())
		return login != ""
	})
	return login
}

var loginURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/login\?token=[A-Z2-7]+`)
