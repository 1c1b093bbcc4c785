package lookup

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
)

// bulkHelp is the help lookup ips and lookup ip share on a bulk lookup.
const bulkHelp = `Addresses are read from the arguments, from FILE (--file), or from stdin (-,
or no argument when stdin is not a terminal): one or more per line, separated
by white space; blank lines are skipped, and # starts a comment. They are
looked up in requests of --batch-size addresses with --concurrency of them in
flight. Results come in input order: one table row, or one JSON line with
--output json, per distinct address looked up. An address repeated later in
the input is sent, charged and printed once, at its first occurrence;
--keep-duplicates sends and prints every occurrence.

Every address has exactly one outcome, counted in the summary on stderr:
  looked up  printed on stdout
  invalid    not an IP address: reported on stderr with its line number
  not sent   never reached the API (--max-credits reached, Ctrl-C): safe to send
             again
  rejected   refused by the API without a charge (401, 403, 422, ...): safe to
             send again once the cause is fixed
  unknown    the request failed after it was sent (a 5xx, a cut connection):
             the API may have processed and charged it; do not resend blindly
--failed FILE receives the addresses not sent or rejected, ready to feed back
in; --unknown FILE the unknown ones. After a 402, 401 or 403 nothing more is
sent: the rest of the input is read and counted as not sent. Ctrl-C stops
sending and reading; every address read is still accounted for (exit 130).
The summary gives the credits spent and possibly spent, from the answers.

--journal FILE records each request before it is sent, and each address's
outcome once it is handled. Run the same command with the same journal to
resume a run that was interrupted or killed: the addresses it holds as looked
up, and their repeats, are not sent or printed again; those it holds as sent
and not answered go to --unknown, unsent, unless --resend-unknown.

--max-credits N spends at most N credits (an in-memory budget of the run): the
run sends the requests that fit and stops at the first that does not, which,
with the rest of the input, is not sent (in --failed, exit 3). A run with a
journal resumes from there.

--dry-run reads and checks the input and prints the addresses, the distinct
ones, the requests and the credits the run would take, sending no lookup;
with an API key it also shows the credits left (a free request), and with
--max-credits whether the run fits (with a journal: what the rest would
take).

Exit code: 0 when every address was looked up, also when words were not IP
addresses (each is reported on stderr and counted in the summary); 3 when
some were not sent, rejected or unknown; 2 when no word is an IP address;
130 on Ctrl-C.`

// NewCmdIPs returns lookup ips. runF, when not nil, runs in place of the
// command's own run function, given the options once they are parsed and
// checked.
func NewCmdIPs(f *cmdutil.Factory, runF func(context.Context, *BulkOptions) error) *cobra.Command {
	opts := newBulkOptions(f, "lookup ips")
	cmd := &cobra.Command{
		Use:   "ips [ADDR... | - | --file FILE]",
		Short: "Look up many IP addresses, in batches of up to 1000 (0.9 credit each)",
		Long:  "Look up many IP addresses.\n\n" + bulkHelp,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ready(f)
			if err := opts.setInput(args, "ADDR..., - (stdin) or --file FILE"); err != nil {
				return err
			}
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return bulkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "file", "", `file of addresses ("-" for stdin)`)
	addBulkFlags(cmd.Flags(), opts)
	cmdutil.SetExamples(cmd, "synthient lookup ips 1.1.1.1 8.8.8.8", "synthient lookup ips --file addresses.txt --dry-run",
		"synthient lookup ips --file addresses.txt -o json --failed resend.txt --unknown check.txt",
		"synthient lookup ips --file addresses.txt -o csv --journal run.journal")
	return cmd
}
