package clitest

import (
	"regexp"
	"strings"
)

// sgrRe matches an SGR sequence (colour).
var sgrRe = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Screen returns what a terminal shows of out, as lines: a carriage
// return goes back to the start of the line, ESC [K and ESC [2K erase it
// (from the cursor, or whole), and colour is dropped. A line is ended by
// a newline; what follows the last one is a line too, when a terminal
// shows something there.
func Screen(out string) []string {
	out = sgrRe.ReplaceAllString(out, "")
	var lines []string
	var line []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[2K"):
			line, col = line[:0], 0
			i += 4
			continue
		case strings.HasPrefix(out[i:], "\x1b[K"):
			line = line[:min(col, len(line))]
			i += 3
			continue
		}
		r, size := rune(out[i]), 1
		if r >= 0x80 {
			for _, rr := range out[i:] {
				r = rr
				break
			}
			size = len(string(r))
		}
		i += size
		switch r {
		case '\n':
			lines = append(lines, strings.TrimRight(string(line), " "))
			line, col = line[:0], 0
		case '\r':
			col = 0
		default:
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	if s := strings.TrimRight(string(line), " "); s != "" {
		lines = append(lines, s)
	}
	return lines
}
