// Package textsafe keeps what the command prints from acting on a
// terminal.
//
// Strings from the server (titles, details, lookup and export fields,
// request ids, stream lines, cursors) must not reach a terminal as
// control sequences: ESC, BEL, OSC 8 and OSC 52 set window titles, clear
// the screen, forge links or write the clipboard, and a lone 0x9b byte is
// CSI on an 8-bit terminal. The defence has two layers:
//
//   - The command's stdout and stderr are wrapped, once, in a Writer:
//     whatever any print path writes, every C0 control but tab and
//     newline, DEL, every C1 control and every byte that is not UTF-8
//     leaves it as a visible escape (AppendText). Only the progress bars,
//     which draw with \r, write to the raw stderr.
//   - Every JSON document printed (a result, a value of --jq) is escaped
//     first (AppendJSON): control characters, C1 controls, DEL,
//     U+2028 and U+2029 as \u escapes inside strings, so the document
//     stays valid JSON and decodes to the same values, and the Writer
//     then finds nothing to change in it.
//
// The escapes (documented in docs/cli.md): \x1b for a C0 control or DEL,
// \u009b for a C1 control, \x9b for a byte that is not UTF-8; in JSON,
// \u001b, \u009b, \u2028 and \ufffd for a byte that is not UTF-8 (what a
// JSON decoder makes of it anyway).
package textsafe

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// ControlRune reports a rune the terminal would act on: a C0 control, DEL
// or a C1 control.
func ControlRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f)
}

// AppendText appends s to dst with every control character and every byte
// that is not UTF-8 made visible: a C0 control or DEL as \x1b, a C1
// control as \u009b, a stray byte as \x9b. With layout, tab and newline
// are kept; without, they are escaped too (a table cell is one line).
func AppendText(dst, s []byte, layout bool) []byte {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(dst, `\x`, rune(s[0]), 2)
		case layout && (r == '\t' || r == '\n'):
			dst = append(dst, s[0])
		case r < 0x80 && ControlRune(r):
			dst = appendHex(dst, `\x`, r, 2)
		case ControlRune(r):
			dst = appendHex(dst, `\u`, r, 4)
		default:
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}

// EscapeCell renders a table cell on one line, with no control character.
func EscapeCell(s string) string {
	if !NeedsEscape(s) {
		return s
	}
	return string(AppendText(nil, []byte(s), false))
}

// NeedsEscape reports whether s holds a control character or a byte
// outside printable ASCII (which may be one).
func NeedsEscape[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return true
		}
	}
	return false
}

func appendHex(dst []byte, prefix string, r rune, digits int) []byte {
	dst = append(dst, prefix...)
	h := strconv.FormatInt(int64(r), 16)
	for i := len(h); i < digits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, h...)
}

// AppendJSON appends the JSON text s to dst with nothing a terminal acts
// on: inside strings, a control character, DEL, a C1 control, U+2028 and
// U+2029 become \u escapes and a byte that is not UTF-8 becomes \ufffd;
// between tokens, tab, CR and newline become spaces. Valid JSON stays
// valid and decodes to the same values; invalid JSON stays invalid, but
// harmless.
func AppendJSON(dst, s []byte) []byte {
	var st jsonScan
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case !st.inString && (r == '\t' || r == '\r' || r == '\n'):
			dst = append(dst, ' ')
		case ControlRune(r) || r == '\u2028' || r == '\u2029':
			dst = appendHex(dst, `\u`, r, 4)
		default:
			dst = append(dst, s[:size]...)
		}
		st.step(r)
		s = s[size:]
	}
	return dst
}

// jsonScan follows JSON text far enough to know whether a rune is inside
// a string.
type jsonScan struct {
	inString bool
	escaped  bool // the previous rune was a backslash inside a string
}

func (st *jsonScan) step(r rune) {
	switch {
	case st.escaped:
		st.escaped = false
	case st.inString && r == '\\':
		st.escaped = true
	case r == '"':
		st.inString = !st.inString
	}
}

// MaxPending bounds the unfinished line a Writer holds back: a longer
// one is written at a character boundary.
const MaxPending = 64 << 10

// Writer is what the commands see as their stdout and stderr: it
// redacts secrets (see redact.Redactor) and escapes control characters
// (AppendText) before anything reaches w. It works on whole lines, holding
// back an unfinished one until its newline or Flush, so that neither a
// secret nor a UTF-8 sequence split across two writes slips through. Its
// first write error is sticky: every later Write and Flush returns it and
// writes nothing, so that the caller can tell a command whose output was lost
// (a help page or a narration that did not check its writes). It is safe
// for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	secrets *redact.Redactor
	color   bool // marks (Paint) become SGR sequences; else they are removed
	pending []byte
	buf     []byte
	err     error // the first write error
}

// NewWriter returns a Writer to w that redacts the secrets of secrets.
func NewWriter(w io.Writer, secrets *redact.Redactor) *Writer {
	return &Writer{w: w, secrets: secrets}
}

// SetColor makes the marks of Paint colour what the Writer writes (color)
// or disappear from it (the default).
func (s *Writer) SetColor(color bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.color = color
}

// Write writes p's whole lines, redacted and escaped, and holds back an
// unfinished last line (up to 64 KiB).
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	s.pending = append(s.pending, p...)
	n := readyPrefix(s.pending)
	if n == 0 {
		return len(p), nil
	}
	err := s.emit(s.pending[:n])
	s.pending = append(s.pending[:0], s.pending[n:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the unfinished line held back, and returns the first write
// error, of this or any earlier write.
func (s *Writer) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return s.err
	}
	err := s.emit(s.pending)
	s.pending = s.pending[:0]
	return err
}

// emit writes b redacted and escaped, unless an earlier write failed.
func (s *Writer) emit(b []byte) error {
	if s.err != nil {
		return s.err
	}
	b = s.secrets.Redact(b)
	if NeedsEscape(b) {
		s.buf = AppendText(s.buf[:0], b, true)
		b = s.buf
		if bytes.ContainsRune(b, tokenOpen) {
			b = []byte(replaceTokens(string(b), s.color))
		}
	}
	n, err := s.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	s.err = err
	return err
}

// readyPrefix returns how much of b can be written now: up to its last
// newline or, when it is too long to hold, up to its last whole character.
func readyPrefix(b []byte) int {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	if len(b) < MaxPending {
		return 0
	}
	for i := len(b) - 1; i >= 0 && i > len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
