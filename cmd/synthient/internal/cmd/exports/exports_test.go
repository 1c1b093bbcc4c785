package exports_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// The commands that take a feed list the feed names in their help, and
// shell completion offers the names that start with what was typed, and no
// file names.
func TestFeedArgument(t *testing.T) {
	t.Parallel()
	all := "proxies\nanonymizers\ntorrents\nhoneypot_http\nhoneypot_https\nhoneypot_dns\nhoneypot_adb\nja4t\n"
	for _, tt := range []struct {
		name     string
		command  []string
		typed    string
		complete string
	}{
		{"exports list", []string{"exports", "list"}, "", all},
		{"exports meta", []string{"exports", "meta"}, "honeypot_h", "honeypot_http\nhoneypot_https\n"},
		{"exports download", []string{"exports", "download"}, "ja", "ja4t\n"},
		{"stream", []string{"stream"}, "nope", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			help := clitest.Call{Args: append(slices.Clone(tt.command), "--help")}.Run(t)
			clitest.RequireCode(t, help, 0, "--help")
			assert.Contains(t, help.Stdout, "FEED is one of: proxies, anonymizers, torrents, honeypot_http, honeypot_https, honeypot_dns, honeypot_adb, ja4t.")
			r := clitest.Call{Args: append(append([]string{"__complete"}, tt.command...), tt.typed)}.Run(t)
			clitest.RequireCode(t, r, 0, "__complete")
			assert.Equal(t, tt.complete+":4\n", r.Stdout, "feed names, then the directive: no file names")
			second := clitest.Call{Args: append(append([]string{"__complete"}, tt.command...), "proxies", "")}.Run(t)
			want := ":4\n" // nothing for a later argument
			if tt.name == "exports meta" || tt.name == "exports download" {
				want = "latest\n:4\n" // an ID (TestExportIDCompletion)
			}
			assert.Equal(t, want, second.Stdout)
		})
	}
}

// Shell completion of an export ID offers "latest" and, with a key, the
// ids of the feed's newest exports, from a listing; without a key only
// "latest".
func TestExportIDCompletion(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	for _, tt := range []struct {
		name  string
		run   func(t *testing.T, args ...string) clitest.Result
		typed string
		want  func(t *testing.T, ids []string)
	}{
		{"with a key", func(t *testing.T, args ...string) clitest.Result { return clitest.RunSrv(t, srv, args...) }, "", func(t *testing.T, ids []string) {
			require.Greater(t, len(ids), 2, "latest and the listing")
			assert.Equal(t, "latest", ids[0])
			assert.Regexp(t, `^\d{4}-\d{2}-\d{2}(/\d{2})?$`, ids[1])
		}},
		{"typed a prefix", func(t *testing.T, args ...string) clitest.Result { return clitest.RunSrv(t, srv, args...) }, "la", func(t *testing.T, ids []string) {
			assert.Equal(t, []string{"latest"}, ids)
		}},
		{"without a key", func(t *testing.T, args ...string) clitest.Result { return clitest.Call{Args: args}.Run(t) }, "", func(t *testing.T, ids []string) {
			assert.Equal(t, []string{"latest"}, ids)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, cmd := range []string{"meta", "download"} {
				r := tt.run(t, "__complete", "exports", cmd, "proxies", tt.typed)
				clitest.RequireCode(t, r, 0, "__complete")
				got := clitest.Lines(r.Stdout)
				require.NotEmpty(t, got)
				assert.Equal(t, ":4", got[len(got)-1], "no file names")
				tt.want(t, got[:len(got)-1])
			}
		})
	}
}
