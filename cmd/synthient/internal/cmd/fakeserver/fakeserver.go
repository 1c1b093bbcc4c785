// Package fakeserver is the fake-server command: the fake Synthient API
// (and its export storage host) that the demo and --fake use, served
// until interrupted, for other programs and for people.
package fakeserver

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/synthienttest"
)

// Options are the options of fake-server.
type Options struct {
	Printer *output.Printer
	Secrets *redact.Redactor
	Listen  string
}

// NewCmdFakeServer returns fake-server. runF, when not nil, runs in place
// of the command's own run function.
func NewCmdFakeServer(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Secrets: f.Secrets}
	cmd := &cobra.Command{
		Use:   "fake-server",
		Short: "Serve the fake Synthient API until interrupted",
		Long: `fake-server runs the fake Synthient API (and its export storage host) that the
demo and --fake use, and prints its base URL and an API key with every scope:

  synthient fake-server --listen 127.0.0.1:8080
  SYNTHIENT_BASE_URL=http://127.0.0.1:8080/api/v4 SYNTHIENT_API_KEY=<key> synthient account`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer = f.Printer
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address of the API (the storage host takes a free port)")
	cmdutil.SetExamples(cmd, "synthient fake-server --listen 127.0.0.1:8080")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	srv, err := synthienttest.Start(synthienttest.WithListenAddr(opts.Listen))
	if err != nil {
		return clierr.Usagef("cannot listen on %s: %v", opts.Listen, err)
	}
	defer srv.Close()
	// The fake's key (the same in every run) is printed on purpose, also
	// when SYNTHIENT_API_KEY holds it from an earlier run.
	opts.Secrets.Forget(srv.APIKey)
	p := opts.Printer
	if p.JSON() {
		if err := p.Emit(map[string]string{
			"base_url": srv.URL, "api_key": srv.APIKey, "storage_url": srv.StorageURL,
		}); err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(p.Out, "base URL:    %s\nAPI key:     %s\nstorage URL: %s\n"+
		"\nexport SYNTHIENT_BASE_URL=%s SYNTHIENT_API_KEY=%s\nServing until interrupted (Ctrl-C).\n",
		srv.URL, srv.APIKey, srv.StorageURL, srv.URL, srv.APIKey); err != nil {
		return err // nobody can learn the URL and the key: no use serving
	}
	<-ctx.Done()
	return nil
}
