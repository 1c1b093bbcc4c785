package config

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"

	"github.com/joho/godotenv"
)

// maxDotEnv is the largest .env read.
const maxDotEnv = 1 << 20

// dotEnvKey is the one variable read from .env.
const dotEnvKey = "SYNTHIENT_API_KEY"

// ReadDotEnv returns the value of SYNTHIENT_API_KEY in the .env file at
// path; "" when the file does not exist or does not set it (or sets it
// empty). Only that variable is taken; the file is parsed by
// joho/godotenv, as dotenv tools write it: NAME=VALUE, optionally after
// "export ", bare (up to a " #" comment), in single quotes (as written)
// or in double quotes (\n, \r and \" unescaped), a quoted value running
// over lines, "#" comment lines. $NAME and ${NAME} in a bare or
// double-quoted value expand to a variable set earlier in the same
// file, and to nothing otherwise: the process's environment is never
// read. The last assignment wins.
//
// The file is read as readRegular reads it: a .env that is not a regular
// file (a named pipe, a directory, a link to a device) or is larger than
// 1 MiB is a *FileError, as is one that mentions SYNTHIENT_API_KEY and
// does not parse, or sets it to more than one word. A file that does not
// mention it is not parsed. No error shows a value of the file.
func ReadDotEnv(path string) (string, error) {
	b, _, err := readRegular(path, maxDotEnv)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !bytes.Contains(b, []byte(dotEnvKey)) {
		return "", nil // whatever the rest says, it does not set the key
	}
	vars, err := godotenv.UnmarshalBytes(b)
	if err != nil {
		return "", &FileError{Path: path, Msg: "not a .env file that can be read (" + dotEnvProblem(err) + "): the key " + dotEnvKey + " it mentions cannot be taken from it"}
	}
	key := strings.TrimSpace(vars[dotEnvKey])
	if strings.IndexFunc(key, notKeyRune) >= 0 {
		return "", &FileError{Path: path, Msg: dotEnvKey + ": more than one word (white space or control characters), not a single API key"}
	}
	return key, nil
}

// dotEnvProblem says what godotenv found wrong, without the text of the
// file its errors quote (which may be a key).
func dotEnvProblem(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unterminated quoted value"):
		return "a quoted value is not closed"
	case strings.HasPrefix(msg, "unexpected character"):
		return "a line is not NAME=VALUE: a name holds a character other than letters, digits, _ and ."
	}
	return "it does not parse"
}
