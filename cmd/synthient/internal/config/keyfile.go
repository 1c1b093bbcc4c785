// Package config finds the settings of a run: the API key and where it
// comes from, the base URL and the client's options, from the flags, the
// environment, a .env file, the profiles of the config file and the
// system keychain.
package config

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode"

	"golang.org/x/term"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/internal/safefile"
)

// MaxKeyFile is the largest --api-key-file read: a key is 36 bytes, and a
// bigger file is the wrong file.
const MaxKeyFile = 4 << 10

// ReadKeyFile reads a key from the file name ("-": stdin), trimmed of
// surrounding white space (the newline an editor or echo adds). The file
// may be a regular file, a pipe or named pipe (<(pass show synthient)),
// or a terminal; anything else (a directory, /dev/zero, a socket) is
// refused, and at most MaxKeyFile+1 bytes are read. A file that cannot be
// read, is empty, too big, or holds more than one word is a usage error
// that never shows what the file holds. Opening and reading stop when ctx
// is done (Ctrl-C while a terminal, a pipe or a named pipe has not sent
// the key).
func ReadKeyFile(ctx context.Context, name string, stdin io.Reader) (string, error) {
	what := "stdin"
	if name != "-" {
		what = name
	}
	b, err := interrupt.Do(ctx, func() ([]byte, error) {
		r := stdin
		if name != "-" {
			f, err := openKeyFile(name)
			if err != nil {
				return nil, err
			}
			defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
			r = f
		}
		b, err := io.ReadAll(io.LimitReader(r, MaxKeyFile+1))
		if err != nil {
			return nil, clierr.Usagef("--api-key-file: reading %s: %v", what, err)
		}
		return b, nil
	}, nil)
	if err != nil {
		return "", err
	}
	return checkKey(b, "--api-key-file", what)
}

// openKeyFile opens the key file name, refusing what ReadKeyFile does not
// read. A named pipe is opened as it is, waiting for its writer; any
// other file with O_NONBLOCK, so that its open never waits.
func openKeyFile(name string) (*os.File, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	if fi, err := os.Stat(name); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		// Opened with O_NONBLOCK, a named pipe would read as empty
		// until its writer came.
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(name, flag, 0) //nolint:gosec // the --api-key-file the user named: reading it is the point
	if err != nil {
		return nil, clierr.Usagef("--api-key-file: %v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // Stat's error is the one to report
		return nil, clierr.Usagef("--api-key-file: %v", err)
	}
	m := fi.Mode()
	switch {
	case m.IsRegular() && fi.Size() > MaxKeyFile:
		err = clierr.Usagef("--api-key-file: %s is larger than %d bytes, too large for an API key", name, MaxKeyFile)
	case m.IsRegular(), m&fs.ModeNamedPipe != 0:
	case m&fs.ModeCharDevice != 0 && term.IsTerminal(int(f.Fd())):
	default:
		err = clierr.Usagef("--api-key-file: %s is not a regular file, a pipe or a terminal (%s): refused", name, safefile.Kind(m))
	}
	if err != nil {
		_ = f.Close() // the refusal is the error to report
		return nil, err
	}
	return f, nil
}

// ReadKey reads a key from r (stdin), as ReadKeyFile reads a file: flag
// and what name the flag and the source in its errors.
func ReadKey(ctx context.Context, r io.Reader, flag, what string) (string, error) {
	b, err := interrupt.Do(ctx, func() ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, MaxKeyFile+1))
		if err != nil {
			return nil, clierr.Usagef("%s: reading %s: %v", flag, what, err)
		}
		return b, nil
	}, nil)
	if err != nil {
		return "", err
	}
	return checkKey(b, flag, what)
}

// checkKey returns the key b holds, trimmed; one that is empty, too big,
// or more than one word is a usage error that never shows b.
func checkKey(b []byte, flag, what string) (string, error) {
	key := strings.TrimSpace(string(b))
	switch {
	case len(b) > MaxKeyFile:
		return "", clierr.Usagef("%s: %s is larger than %d bytes, too large for an API key", flag, what, MaxKeyFile)
	case key == "":
		return "", clierr.Usagef("%s: %s is empty", flag, what)
	case strings.IndexFunc(key, notKeyRune) >= 0:
		return "", clierr.Usagef("%s: %s holds more than one word (white space or control characters after trimming), not a single API key", flag, what)
	}
	return key, nil
}

func notKeyRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
}
