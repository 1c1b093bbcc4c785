package textsafe

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Colour.
//
// What the command colours (an outcome, a risk score) passes through the
// Writer like any text, so it cannot be an escape sequence: it is marked
// instead, with tokens of two private-use characters around a per-process
// random nonce and a style, and the Writer turns each token into the SGR
// sequence of its style when its terminal shows colour, or removes it. A
// server's text cannot hold a token: it would have to guess the nonce,
// and every other escape sequence it sends is escaped as before.

// Style is a colour or weight the command gives to text.
type Style byte

// The styles; Reset ends one.
const (
	Reset Style = '0' + iota
	Bold
	Dim
	Red
	Green
	Yellow
	Cyan
)

// sgr are the SGR sequences of the styles.
var sgr = map[Style]string{
	Reset: "\x1b[0m", Bold: "\x1b[1m", Dim: "\x1b[2m",
	Red: "\x1b[31m", Green: "\x1b[32m", Yellow: "\x1b[33m", Cyan: "\x1b[36m",
}

const (
	tokenOpen  = '\uE000'
	tokenClose = '\uE001'
)

// nonce is this process's: 16 hexadecimal digits a token holds.
var nonce = func() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}()

// token is the mark of style s.
func token(s Style) string {
	return string(tokenOpen) + nonce + string(s) + string(tokenClose)
}

// Paint returns text marked with style s: coloured on a Writer that shows
// colour, as it is on any other.
func Paint(s Style, text string) string {
	if text == "" {
		return ""
	}
	return token(s) + text + token(Reset)
}

// tokenLen is the length in bytes of a token.
var tokenLen = len(token(Reset))

// Width returns how many characters s takes on a terminal, its marks
// left out (one per rune: the command's tables hold no wide characters of
// its own).
func Width(s string) int {
	return utf8.RuneCountInString(Unpaint(s))
}

// Unpaint returns s without its marks.
func Unpaint(s string) string { return replaceTokens(s, false) }

// replaceTokens returns s with every token replaced by its SGR sequence
// (color) or removed.
func replaceTokens(s string, color bool) string {
	if !strings.ContainsRune(s, tokenOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, string(tokenOpen)+nonce)
		if i < 0 || len(s) < i+tokenLen || !strings.HasPrefix(s[i+tokenLen-utf8.RuneLen(tokenClose):], string(tokenClose)) {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if seq, ok := sgr[Style(s[i+utf8.RuneLen(tokenOpen)+len(nonce)])]; ok && color {
			b.WriteString(seq)
		}
		s = s[i+tokenLen:]
	}
}
