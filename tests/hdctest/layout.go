package hdctest

import (
	"context"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// layoutViewports are the sizes Check lays every page out at: a phone's
// (390 px wide) and a laptop's.
var layoutViewports = []struct{ width, height int64 }{{390, 844}, {1280, 800}}

// layoutProblems is the script that says what is wrong with the page's
// layout at the viewport's width: the page wider than the viewport (so
// that it scrolls sideways, past the boxes of its own that scroll), and a
// word of a table's header or cell, or of a fact of a facts list (where
// the ids are), laid over two lines or more: broken inside a word. An
// attempt's answer (.excerpt, up to a KiB without a space) and a secret
// shown once (.secret), neither an id, may break.
const layoutProblems = `(() => {
	const out = [];
	const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className.split(" ").join(".") : "");
	const root = document.documentElement;
	if (root.scrollWidth > innerWidth) {
		const past = [...document.body.querySelectorAll("*")].filter(e => e.getBoundingClientRect().right > innerWidth &&
			![...e.children].some(c => c.getBoundingClientRect().right > innerWidth));
		out.push("the page is " + root.scrollWidth + " px wide in a viewport of " + innerWidth + " px, past its right edge: " +
			past.slice(0, 5).map(e => name(e) + " in " + name(e.parentElement)).join(", "));
	}
	for (const cell of document.querySelectorAll("th, td, .facts dd")) {
		const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
		for (let t = texts.nextNode(); t; t = texts.nextNode()) {
			if (t.parentElement.closest(".excerpt, .secret")) {
				continue;
			}
			for (const word of t.data.matchAll(/\S+/g)) {
				const r = document.createRange();
				r.setStart(t, word.index);
				r.setEnd(t, word.index + word[0].length);
				const lines = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
				if (lines.size > 1) {
					out.push(JSON.stringify(word[0]) + " of " + name(cell) + " broken over " + lines.size + " lines");
				}
			}
		}
	}
	return out;
})()`

// checkLayout lays the page out at each of layoutViewports and fails the
// test for each problem layoutProblems finds, then gives the page its
// window's size back (the override cleared, not set to the window's).
func (b *Browser) checkLayout(url string) {
	b.t.Helper()
	for _, v := range layoutViewports {
		b.Run(chromedp.EmulateViewport(v.width, v.height))
		for _, p := range get(b, chromedp.Evaluate[[]string](layoutProblems)) {
			b.t.Errorf("the layout of %s at %d px: %s", url, v.width, p)
		}
	}
	b.Run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		return err
	}))
}
