package iostreams

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// NewBytesBar returns a progress bar on w for a transfer of total bytes.
func NewBytesBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(50*time.Millisecond),
	)
}

// NewCountBar returns a progress bar on w that counts up to total (-1:
// unknown), drawing no spinner of its own.
func NewCountBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(50*time.Millisecond),
		progressbar.OptionSetSpinnerChangeInterval(0), // no spinner goroutine
	)
}
