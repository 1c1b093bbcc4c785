package repocheck_test

import (
	"bufio"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// TestQuickStartRunsOnTheFake builds the README's Quick start and runs it
// against the fake API, with SYNTHIENT_BASE_URL and SYNTHIENT_API_KEY set
// as `synthient fake-server` prints them: it reaches the fake, not the
// real API, and prints a line for an answer with intelligence and for one
// without.
func TestQuickStartRunsOnTheFake(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	readme := filepath.Join(root, "README.md")
	code := quickStart(t, readme)
	// One that does not take the base URL would send the fake's key to the
	// real API: it is not run.
	require.Contains(t, code, "synthient.WithBaseURL(", "the Quick start takes no base URL, so it cannot be pointed at the fake")

	bin := buildMain(t, root, code)
	addr := netip.MustParseAddr("8.8.8.8")
	org := "Example Org"
	for _, tt := range []struct {
		name   string
		answer synthient.IPLookup
		want   string
	}{
		{"with intelligence", synthient.IPLookup{IP: addr,
			Network:      &synthient.Network{ASN: 15169, ISP: "Google LLC", Type: "DATACENTER", Org: &org},
			Intelligence: &synthient.Intelligence{RiskScore: 59, Categories: []string{"COMMERCIAL_VPN"}}},
			"8.8.8.8 AS15169 Google LLC (DATACENTER): risk 59 [COMMERCIAL_VPN]\n"},
		{"without intelligence", synthient.IPLookup{IP: addr,
			Network: &synthient.Network{ASN: 15169, ISP: "Google LLC", Type: "DATACENTER"}},
			"8.8.8.8 AS15169 Google LLC (DATACENTER): nothing observed in 90 days\n"},
		{"without network or intelligence", synthient.IPLookup{IP: addr},
			"8.8.8.8: nothing observed in 90 days\n"},
		{"the fake's own answer, as README.md shows it", synthient.IPLookup{}, shownOutput(t, readme) + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []synthienttest.Option
			if tt.answer.IP.IsValid() {
				opts = append(opts, synthienttest.WithIPLookup(tt.answer))
			}
			srv := synthienttest.NewServer(opts...)
			t.Cleanup(srv.Close)
			cmd := exec.CommandContext(t.Context(), bin)
			cmd.Env = append(environWithout("SYNTHIENT_"), "SYNTHIENT_BASE_URL="+srv.URL, "SYNTHIENT_API_KEY="+srv.APIKey)
			out, err := cmd.Output()
			require.NoError(t, err, "the Quick start: %s", out)
			assert.Equal(t, tt.want, string(out))
			assert.Equal(t, []netip.Addr{addr}, srv.ChargedIPs(), "the lookups the fake charged")
		})
	}
}

// quickStart returns the code of the first Go block after README.md's
// "## Quick start" heading.
func quickStart(t *testing.T, readme string) string {
	t.Helper()
	f, err := os.Open(readme) //nolint:gosec // this repository's README
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // opened read-only
	heading := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if sc.Text() == "## Quick start" {
			heading = n
			break
		}
	}
	require.NotZero(t, heading, "README.md has no \"## Quick start\"")
	blocks, err := goBlocks(readme)
	require.NoError(t, err)
	for _, b := range blocks {
		if b.fence > heading {
			require.True(t, startsWithPackage(b.code), "the Quick start's block is not a whole program")
			return b.code
		}
	}
	require.Fail(t, "no Go block after the Quick start heading")
	return ""
}

// shownOutput returns what README.md shows the Quick start printing: the
// comment of its "go run ." line.
func shownOutput(t *testing.T, readme string) string {
	t.Helper()
	b, err := os.ReadFile(readme) //nolint:gosec // this repository's README
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "go run . "); ok {
			_, shown, ok := strings.Cut(rest, "# ")
			require.True(t, ok, "README.md's %q shows no output", line)
			return strings.TrimSpace(shown)
		}
	}
	require.Fail(t, `README.md has no "go run ." line`)
	return ""
}

// buildMain builds code, a package main, in the root module (through an
// overlay: nothing is written into the tree) and returns the program.
func buildMain(t *testing.T, root, code string) string {
	t.Helper()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	require.NoError(t, os.WriteFile(src, []byte(code), 0o600))
	ov, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "internal", "snippet", "quickstart", "main.go"): src}})
	require.NoError(t, err)
	ovFile := filepath.Join(tmp, "overlay.json")
	require.NoError(t, os.WriteFile(ovFile, ov, 0o600))
	bin := filepath.Join(tmp, "quickstart")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-overlay", ovFile, "-o", bin, "./internal/snippet/quickstart") //nolint:gosec // the go tool, on this module
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// environWithout returns the environment without the variables whose
// names start with prefix.
func environWithout(prefix string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			env = append(env, kv)
		}
	}
	return env
}
