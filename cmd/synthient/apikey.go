package main

import (
	"context"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
)

// maxKeyFile is the largest --api-key-file read: a key is 36 bytes, and a
// bigger file is the wrong file.
const maxKeyFile = 4 << 10

// checkKeyFlags refuses the combinations of key flags that cannot mean
// one key: --api-key with --api-key-file, and --api-key-file - on a
// command that reads its input from stdin too (--file -).
func (a *app) checkKeyFlags(cmd *cobra.Command) error {
	if a.apiKeyFile == "" {
		return nil
	}
	if cmd.Flags().Changed("api-key") {
		return usageError("--api-key and --api-key-file cannot be combined: pass one")
	}
	if in := cmd.Flags().Lookup("file"); a.apiKeyFile == "-" && in != nil && in.Value.String() == "-" {
		return usageError("--api-key-file - and --file - cannot both read stdin")
	}
	return nil
}

// resolveKey sets a.key from --api-key, --api-key-file or
// SYNTHIENT_API_KEY, in that order, and makes it a secret. With --fake it
// needs none. Reading the key file stops when ctx is done.
func (a *app) resolveKey(ctx context.Context) error {
	switch {
	case a.fake:
		return nil
	case a.apiKeyFile != "":
		key, err := readKeyFile(ctx, a.apiKeyFile, a.env.stdin)
		if err != nil {
			return err
		}
		a.key = key
	case a.apiKey != "":
		a.key = a.apiKey
	default:
		a.key = a.env.getenv("SYNTHIENT_API_KEY")
	}
	a.secrets.add(a.key)
	return nil
}

// addKeyFlags makes the keys that args configure secrets, before cobra
// parses them: cobra reports an unknown command before it parses a flag,
// and would echo a key given as the command (synthient --api-key KEY KEY).
// It takes the value of --api-key (also --api-key=VALUE, and with one
// dash) and the key in the file of --api-key-file (see addKeyFlag).
// Nothing after "--" is a flag; a key flag that ends args has no value.
func addKeyFlags(secrets *redactor, args []string) {
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		name, value, inline := keyFlag(args[i])
		if name == "" {
			continue
		}
		if !inline {
			if i+1 == len(args) {
				return
			}
			i++
			value = args[i]
		}
		addKeyFlag(secrets, name, value)
	}
}

// keyFlag returns the name of arg when it is --api-key or --api-key-file,
// with two dashes or one, and the value after its "=" when it holds one
// (inline); name is "" for any other argument.
func keyFlag(arg string) (name, value string, inline bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", "", false
	}
	name, value, inline = strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
	if name != "api-key" && name != "api-key-file" {
		return "", "", false
	}
	return name, value, inline
}

// addKeyFlag makes the key that the flag name with value configures a
// secret: the value of --api-key, or the key in the file of
// --api-key-file when that is a regular file, which cannot block (not
// "-": stdin is read once, by resolveKey).
func addKeyFlag(secrets *redactor, name, value string) {
	if name == "api-key" {
		secrets.add(value)
		return
	}
	if fi, err := os.Stat(value); value != "-" && err == nil && fi.Mode().IsRegular() {
		if key, err := readKeyFile(context.Background(), value, nil); err == nil {
			secrets.add(key)
		}
	}
}

// readKeyFile reads a key from the file name ("-": stdin), trimmed of
// surrounding white space (the newline an editor or echo adds). A file
// that cannot be read, is empty, too big, or holds more than one word is a
// usage error that never shows what the file holds. Opening and reading
// stop when ctx is done (Ctrl-C while a terminal, a pipe or a named pipe
// has not sent the key).
func readKeyFile(ctx context.Context, name string, stdin io.Reader) (string, error) {
	what := "stdin"
	if name != "-" {
		what = name
	}
	b, err := interruptible(ctx, func() ([]byte, error) {
		r := stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return nil, usageError("--api-key-file: %v", err)
			}
			defer f.Close()
			r = f
		}
		b, err := io.ReadAll(io.LimitReader(r, maxKeyFile+1))
		if err != nil {
			return nil, usageError("--api-key-file: reading %s: %v", what, err)
		}
		return b, nil
	}, nil)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxKeyFile:
		return "", usageError("--api-key-file: %s is larger than %d bytes, too large for an API key", what, maxKeyFile)
	case key == "":
		return "", usageError("--api-key-file: %s is empty", what)
	case strings.IndexFunc(key, notKeyRune) >= 0:
		return "", usageError("--api-key-file: %s holds more than one word (white space or control characters after trimming), not a single API key", what)
	}
	return key, nil
}

func notKeyRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
}
