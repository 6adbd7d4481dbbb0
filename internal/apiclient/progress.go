package apiclient

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressMin is the size of a transfer over which hdc call shows its
// progress: smaller ones are over before a bar would say anything.
const progressMin = 4 << 20

// Progress draws progress bars on w, hdc call's standard error, when it is a
// terminal; its zero value draws none.
type Progress struct{ w io.Writer }

// NewProgress returns bars on errOut when it is a terminal, none otherwise,
// so that a script's standard error stays clean.
func NewProgress(errOut io.Writer) Progress {
	if f, ok := errOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return Progress{w: f}
	}
	return Progress{}
}

// reader counts what is read from r, a transfer of size bytes (-1 when
// unknown) described by what, on a bar shown when it is known to exceed
// progressMin: from the start, or once that much has passed.
func (p Progress) reader(r io.Reader, size int64, what string) io.Reader {
	if p.w == nil || (size >= 0 && size <= progressMin) {
		return r
	}
	return &meter{r: r, w: p.w, size: size, what: what}
}

// readCloser is reader for a request body, which must close.
func (p Progress) readCloser(rc io.ReadCloser, size int64, what string) io.ReadCloser {
	return struct {
		io.Reader
		io.Closer
	}{p.reader(rc, size, what), rc}
}

// meter is a reader that moves a progress bar.
type meter struct {
	r       io.Reader
	w       io.Writer
	size, n int64
	what    string
	bar     *progressbar.ProgressBar
}

func (m *meter) Read(b []byte) (int, error) {
	n, err := m.r.Read(b)
	m.n += int64(n)
	if m.bar == nil && (m.size >= 0 || m.n > progressMin) {
		m.bar = newBar(m.w, m.size, m.what)
		_ = m.bar.Add64(m.n)
	} else if m.bar != nil {
		_ = m.bar.Add(n)
	}
	switch {
	case m.bar == nil || err == nil:
	case err == io.EOF:
		_ = m.bar.Finish()
	default:
		_ = m.bar.Exit()
	}
	return n, err
}

// newBar is a bar of size bytes (-1: a spinner with the count).
func newBar(w io.Writer, size int64, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}
