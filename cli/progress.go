package cli

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a progress bar on stderr for runs longer than a second,
// when stderr is a terminal (mode "auto"), always, or never.
type progress struct {
	mode  string
	w     io.Writer
	total int
	start time.Time
	bar   *progressbar.ProgressBar
	calls int
}

func newProgress(mode string, w io.Writer, total int) *progress {
	if mode == "auto" {
		if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			mode = "never"
		}
	}
	return &progress{mode: mode, w: w, total: total, start: time.Now()}
}

// update is called by the simulator with the number of jobs that ended.
func (p *progress) update(ended int) {
	if p.mode == "never" {
		return
	}
	p.calls++
	if p.calls%256 != 0 && ended != p.total {
		return
	}
	if p.bar == nil {
		if p.mode == "auto" && time.Since(p.start) < time.Second {
			return
		}
		p.bar = progressbar.NewOptions(p.total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription("simulating"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	_ = p.bar.Set(ended)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
