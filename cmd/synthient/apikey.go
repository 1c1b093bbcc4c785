package main

import (
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
// needs none.
func (a *app) resolveKey() error {
	switch {
	case a.fake:
		return nil
	case a.apiKeyFile != "":
		key, err := readKeyFile(a.apiKeyFile, a.env.stdin)
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

// keySecretsOnError makes the configured key a secret when the command
// stopped before resolveKey, on an error cobra found first (an argument
// too many: perhaps the key itself). A key file is read only when it is a
// regular file, which cannot block.
func (a *app) keySecretsOnError() {
	a.secrets.add(a.apiKey)
	if a.key != "" || a.apiKeyFile == "" || a.apiKeyFile == "-" {
		return
	}
	if fi, err := os.Stat(a.apiKeyFile); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if key, err := readKeyFile(a.apiKeyFile, nil); err == nil {
		a.secrets.add(key)
	}
}

// readKeyFile reads a key from the file name ("-": stdin), trimmed of
// surrounding white space (the newline an editor or echo adds). A file
// that cannot be read, is empty, too big, or holds more than one word is a
// usage error that never shows what the file holds.
func readKeyFile(name string, stdin io.Reader) (string, error) {
	what, r := "stdin", stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", usageError("--api-key-file: %v", err)
		}
		defer f.Close()
		what, r = name, f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxKeyFile+1))
	if err != nil {
		return "", usageError("--api-key-file: reading %s: %v", what, err)
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
