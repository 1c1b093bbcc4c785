// Package iostreams holds the command's standard streams: stdin, and
// stdout and stderr wrapped so that nothing printed acts on a terminal or
// shows a secret, with what is known of the terminal behind each.
package iostreams

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// System is what the process is given: its standard streams, its
// environment and what it knows of its terminal. A nil func reports no
// terminal (or an empty environment).
type System struct {
	Stdin            io.Reader
	Stdout, Stderr   io.Writer
	Getenv           func(string) string
	StdinIsTerminal  func() bool
	StdoutIsTerminal func() bool
	StderrIsTerminal func() bool
}

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	// In is stdin.
	In io.Reader
	// Out and ErrOut are stdout and stderr as the commands write them:
	// secrets redacted and control characters escaped
	// (textsafe.Writer).
	Out, ErrOut io.Writer
	// RawOut is stdout as it is, for the bytes of an export (--out -).
	RawOut io.Writer
	// RawErr is stderr as it is, for the checks of what file it writes
	// to.
	RawErr io.Writer
	// Progress is where the progress bars draw: on a terminal, a line of
	// their own that the lines written to Out and ErrOut never share (see
	// EndProgress); else stderr as it is.
	Progress io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	out, errOut                    *textsafe.Writer
	term                           *terminal // stderr's terminal; nil when stderr is not one
	noColor                        bool      // NO_COLOR is set, or TERM is dumb
}

// New returns the streams of sys, redacting secrets. Colour is off until
// SetColor.
func New(sys System, secrets *redact.Redactor) *IOStreams {
	s := &IOStreams{
		In:        sys.Stdin,
		RawOut:    sys.Stdout,
		RawErr:    sys.Stderr,
		Progress:  sys.Stderr,
		stdinTTY:  isTerminal(sys.StdinIsTerminal),
		stdoutTTY: isTerminal(sys.StdoutIsTerminal),
		stderrTTY: isTerminal(sys.StderrIsTerminal),
	}
	if sys.Getenv != nil {
		s.noColor = sys.Getenv("NO_COLOR") != "" || sys.Getenv("TERM") == "dumb"
	}
	stdout, stderr := sys.Stdout, sys.Stderr
	if s.stderrTTY {
		s.term = &terminal{w: sys.Stderr}
		s.Progress, stderr = barWriter{t: s.term}, s.term.text(sys.Stderr)
		if s.stdoutTTY { // the same screen, as a rule
			stdout = s.term.text(sys.Stdout)
		}
	}
	s.out, s.errOut = textsafe.NewWriter(stdout, secrets), textsafe.NewWriter(stderr, secrets)
	s.Out, s.ErrOut = s.out, s.errOut
	return s
}

// SetColor turns colour on, on stdout and on stderr each where it is a
// terminal, unless off or the environment says no (NO_COLOR, TERM=dumb).
func (s *IOStreams) SetColor(on bool) {
	on = on && !s.noColor
	s.out.SetColor(on && s.stdoutTTY)
	s.errOut.SetColor(on && s.stderrTTY)
}

// EndProgress erases the progress bar from the terminal: the bar of a
// finished task leaves no line behind (its summary is printed after it).
func (s *IOStreams) EndProgress() {
	if s.term != nil {
		s.term.done()
	}
}

func isTerminal(f func() bool) bool { return f != nil && f() }

// StdinIsTerminal reports whether stdin is a terminal.
func (s *IOStreams) StdinIsTerminal() bool { return s.stdinTTY }

// StdoutIsTerminal reports whether stdout is a terminal.
func (s *IOStreams) StdoutIsTerminal() bool { return s.stdoutTTY }

// StderrIsTerminal reports whether stderr is a terminal.
func (s *IOStreams) StderrIsTerminal() bool { return s.stderrTTY }

// StdoutClosed reports whether err is the error of a write to stdout
// whose reader is gone (EPIPE: a pipe into head that exited), as a
// closed pipe is told from a full disk or any other failure, and from a
// network write the SDK made.
func (s *IOStreams) StdoutClosed(err error) bool {
	f, ok := s.RawOut.(*os.File)
	var pe *fs.PathError
	return ok && errors.As(err, &pe) && pe.Op == "write" && pe.Path == f.Name() && errors.Is(pe.Err, syscall.EPIPE)
}

// Flush writes what Out and ErrOut hold back (an unfinished last line)
// and returns the first error writing stdout, of this or any earlier
// write. An error writing stderr is not returned: there is nowhere left
// to report it, so the commands write their messages there unchecked.
func (s *IOStreams) Flush() error {
	err := s.out.Flush()
	_ = s.errOut.Flush() // see above
	return err
}
