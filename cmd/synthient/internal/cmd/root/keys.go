package root

import (
	"context"
	"os"
	"strings"

	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// addKeyFlags makes the keys that args configure secrets, before cobra
// parses them: cobra reports an unknown command before it parses a flag,
// and would echo a key given as the command (synthient --api-key KEY KEY).
// It takes the value of --api-key (also --api-key=VALUE, and with one
// dash) and the key in the file of --api-key-file (see addKeyFlag).
// Nothing after "--" is a flag; a key flag that ends args has no value.
func addKeyFlags(secrets *redact.Redactor, args []string) {
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
// "-": stdin is read once, by the Factory).
func addKeyFlag(secrets *redact.Redactor, name, value string) {
	if name == "api-key" {
		secrets.Add(value)
		return
	}
	if fi, err := os.Stat(value); value != "-" && err == nil && fi.Mode().IsRegular() {
		if key, err := config.ReadKeyFile(context.Background(), value, nil); err == nil {
			secrets.Add(key)
		}
	}
}
