package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/synthienttest"
)

func (a *app) fakeServerCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "fake-server",
		Short: "Serve the fake Synthient API until interrupted",
		Long: `fake-server runs the fake Synthient API (and its export storage host) that the
demo and --fake use, and prints its base URL and an API key with every scope:

  synthient fake-server --listen 127.0.0.1:8080
  SYNTHIENT_BASE_URL=http://127.0.0.1:8080/api/v4 SYNTHIENT_API_KEY=<key> synthient account`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := synthienttest.Start(synthienttest.WithListenAddr(listen))
			if err != nil {
				return usageError("cannot listen on %s: %v", listen, err)
			}
			defer srv.Close()
			// The fake's key (the same in every run) is printed on purpose,
			// also when SYNTHIENT_API_KEY holds it from an earlier run.
			a.secrets.forget(srv.APIKey)
			if a.json() {
				if err := a.emit(map[string]string{
					"base_url": srv.URL, "api_key": srv.APIKey, "storage_url": srv.StorageURL,
				}); err != nil {
					return err
				}
			} else if _, err := fmt.Fprintf(a.env.stdout, "base URL:    %s\nAPI key:     %s\nstorage URL: %s\n"+
				"\nexport SYNTHIENT_BASE_URL=%s SYNTHIENT_API_KEY=%s\nServing until interrupted (Ctrl-C).\n",
				srv.URL, srv.APIKey, srv.StorageURL, srv.URL, srv.APIKey); err != nil {
				return err // nobody can learn the URL and the key: no use serving
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address of the API (the storage host takes a free port)")
	return cmd
}
