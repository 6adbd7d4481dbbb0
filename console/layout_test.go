package console

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestTablesScroll: every table of every page is in a box of its own that
// scrolls sideways (div.scroll), which the keyboard reaches and a screen
// reader names, so that a table wider than a phone never makes the page
// scroll sideways (tests/console measures it at 390 px).
func TestTablesScroll(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, name := range names {
		b, err := fs.ReadFile(templateFS, name)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		opened, boxed := strings.Count(page, "<table"), len(scrollBox.FindAllString(page, -1))
		if opened != boxed || strings.Count(page, "</table></div>") != opened {
			t.Errorf("%s: %d tables, %d in a scroll box", name, opened, boxed)
		}
		tables += opened
	}
	if tables == 0 {
		t.Fatal("no table in the templates")
	}
}

// scrollBox is a table opened in its scroll box: focusable, a region with
// a name.
var scrollBox = regexp.MustCompile(`<div class="scroll" role="region" tabindex="0" aria-label="[^"]+"><table[ >]`)
