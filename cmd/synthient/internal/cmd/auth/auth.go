// Package auth is the auth command group: log in (the key kept in the
// system keychain, else in a 0600 file), show where the key and the
// settings come from, log out.
package auth

import (
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// NewCmdAuth returns the auth command group.
func NewCmdAuth(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.GroupCommand("auth", "Log in with an API key, show where the settings come from, log out",
		NewCmdLogin(f, nil), NewCmdStatus(f), NewCmdLogout(f))
	cmd.Long = `Log in: the API key is checked with the API (a free request) and kept in the
system keychain (the macOS Keychain, the Windows Credential Manager, the Secret
Service on Linux), or, where there is none (a headless server), in the file
credentials.toml of the configuration directory, mode 0600. Each profile of
config.toml (--profile, SYNTHIENT_PROFILE) has a key of its own. The default
profile, until it has one, takes the key the official Synthient CLI kept in
the keychain (service synthient, account token), which is never changed here;
no profile may be named token.

The key a command uses is the first of: --api-key or --api-key-file,
SYNTHIENT_API_KEY, SYNTHIENT_API_KEY in a .env file of the current directory,
the profile's stored key, which is bound to the host it was logged in for and
sent to no other. A key is never printed.`
	return cmd
}
