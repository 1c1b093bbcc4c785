package main

// Tests of main.go: the command as a process. The recipes of docs/cli.md
// run it, as the synthient on their PATH, from a shell. The tests of the
// commands, in-process, are in their packages under internal (the
// harness: package clitest).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// asCommand, set to 1 in its environment, makes the test binary run as
// the command: a recipe's synthient is a link to it.
const asCommand = "SYNTHIENT_TEST_BINARY_IS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		if grace, err := time.ParseDuration(os.Getenv(graceVar)); err == nil {
			interruptGrace = grace
		}
		main() // exits
	}
	goleak.VerifyTestMain(m)
}

// recipeMarker introduces a recipe's block in docs/cli.md.
var recipeMarker = regexp.MustCompile("(?m)^<!-- recipe: (\\w+) -->\n```sh\n((?s:.*?))```\n")

// readRecipes returns the recipes of docs/cli.md by name.
func readRecipes(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	recipes := map[string]string{}
	for _, m := range recipeMarker.FindAllStringSubmatch(string(doc), -1) {
		recipes[m[1]] = m[2]
	}
	return recipes
}

// process returns the command run by this test binary as a process of
// its own, against srv.
func process(t *testing.T, srv *synthienttest.Server, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, args...) //nolint:gosec // this test binary, run as the command
	cmd.Env = append(os.Environ(), asCommand+"=1", "SYNTHIENT_BASE_URL="+srv.URL, "SYNTHIENT_API_KEY="+srv.APIKey)
	return cmd
}

// recipe is one run of a recipe with sh in dir, against srv, with this
// test binary as the synthient on the PATH.
func recipe(t *testing.T, srv *synthienttest.Server, script, dir string) *exec.Cmd {
	t.Helper()
	cmd := process(t, srv)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(cmd.Path, filepath.Join(bin, "synthient")))
	sh := exec.CommandContext(t.Context(), "sh", "-eu", "-c", script) //nolint:gosec // a recipe of the docs, which the test runs
	sh.Dir = dir
	sh.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return sh
}

// A stdout that closes early (synthient ... | head -2) ends the command
// as SIGPIPE ends a standard tool: the process is killed by SIGPIPE (the
// shell's 141) and prints no error. lookup ips stops sending first: the
// output of the first request comes before the second is sent (the text
// table too); its reader reads a byte and closes while the second request
// is held in flight, and no request after it is charged (the fake's
// credits), in every output format.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	in := strings.Join(clitest.Addrs(300), "\n") + "\n"
	for _, output := range []string{"text", "csv", "json"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			credits := srv.Credits(srv.APIKey)
			front, release := clitest.HoldLookups(t, srv, 2) // until the reader closed
			cmd := process(t, srv, "--base-url", front, "-o", output, "lookup", "ips", "--file", "-", "--batch-size", "10", "--concurrency", "1")
			cmd.Stdin = strings.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			began := make(chan error, 1)
			go func() {
				_, err := stdout.Read(make([]byte, 1))
				began <- err
			}()
			select {
			case err := <-began:
				require.NoError(t, err)
			case <-time.After(time.Minute): // only a hang takes this long
				t.Fatal("no output while the second request was in flight: the first request's results were held back")
			}
			require.NoError(t, stdout.Close())
			release()
			requireSIGPIPE(t, cmd.Wait(), cmd, stderr.String())
			charged := credits - srv.Credits(srv.APIKey)
			assert.LessOrEqual(t, charged, int64(18), "credits charged: at most the two requests sent before stdout closed\nstderr:\n%s", stderr.String())
			assert.NotContains(t, stderr.String(), "broken pipe")
			s := clitest.ParseSummary(t, stderr.String())
			assert.Equal(t, charged, s.Credits+s.MaybeCredits, "the summary's credits")
		})
	}
	// Any command, its help too, ends so on a stdout whose reader is gone.
	for _, args := range [][]string{{"--help"}, {"-o", "json", "stream", "proxies", "--max-events", "5"},
		{"exports", "download", "proxies", "--out", "-"}, {"lookup", "8.8.8.8"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			w := clitest.ClosedPipe(t)
			cmd := process(t, srv, args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			require.NoError(t, cmd.Start())
			require.NoError(t, w.Close()) // the child holds it
			requireSIGPIPE(t, cmd.Wait(), cmd, stderr.String())
			assert.Empty(t, stderr.String(), "stderr")
		})
	}
}

// requireSIGPIPE stops the test unless the command, whose Wait returned
// err, was ended by SIGPIPE.
func requireSIGPIPE(t *testing.T, err error, cmd *exec.Cmd, stderr string) {
	t.Helper()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGPIPE, "ended by SIGPIPE, not %v; stderr:\n%s", cmd.ProcessState, stderr)
}

// A second Ctrl-C kills a command the first could not stop: a template
// that does not end.
func TestSecondInterruptKills(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	nested := strings.Repeat("{{range $.scopes}}", 8) + strings.Repeat("{{end}}", 8)
	cmd := process(t, srv, "--template", nested, "account")
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	require.Eventually(t, func() bool { return srv.Arrivals(synthienttest.RouteAccount) == 1 },
		2*time.Minute, 10*time.Millisecond, "the account was asked")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case err := <-done:
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the command's exit")
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			require.True(t, ok)
			assert.Equal(t, syscall.SIGINT, ws.Signal(), "ended by the second Ctrl-C")
			return
		case <-tick.C:
			_ = cmd.Process.Signal(os.Interrupt)
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done //nolint:errcheck // the kill's: the failure is reported below
			t.Fatal("Ctrl-C, again and again, did not end the command in 2 minutes")
		}
	}
}

// runRecipe runs a recipe to its end and returns its output; it must
// succeed.
func runRecipe(t *testing.T, srv *synthienttest.Server, script, dir string) string {
	t.Helper()
	out, err := recipe(t, srv, script, dir).CombinedOutput()
	require.NoError(t, err, "the recipe failed:\n%s", out)
	return string(out)
}

// Every recipe of docs/cli.md runs as written against the fake, and does
// what its text says.
func TestRecipes(t *testing.T) {
	t.Parallel()
	recipes := readRecipes(t)
	require.ElementsMatch(t, []string{"enrich", "mirror", "tail"}, keysOf(recipes), "the recipes of docs/cli.md")
	t.Run("enrich", func(t *testing.T) {
		t.Parallel()
		checkEnrichRecipe(t, recipes["enrich"])
	})
	t.Run("mirror", func(t *testing.T) {
		t.Parallel()
		checkMirrorRecipe(t, recipes["mirror"])
	})
	t.Run("tail", func(t *testing.T) {
		t.Parallel()
		checkTailRecipe(t, recipes["tail"])
	})
}

func keysOf(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// The enrich recipe adds the risk score and categories of each login's
// address, as lookup ip gives them, empty for an address that is not one,
// and charges each distinct address once.
func checkEnrichRecipe(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	logins := []string{"user,ip,time", "alice,203.0.113.7,09:00", "bob,8.8.8.8,09:05",
		"carol,203.0.113.7,09:07", "dave,not-an-address,09:09", "erin,9.9.9.9,09:10"}
	// Erin's line has a Windows line end, which the output drops.
	file := strings.Join(logins[:len(logins)-1], "\n") + "\n" + logins[len(logins)-1] + "\r\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logins.csv"), []byte(file), 0o600))
	srv := clitest.NewServer(t)
	out := runRecipe(t, srv, script, dir)
	assert.Contains(t, out, `line 4: "not-an-address" is not an IP address`, "the invalid line is reported")

	want := []string{"user,ip,time,risk_score,categories"}
	for _, l := range logins[1:] {
		want = append(want, l+","+riskCells(t, srv, strings.Split(l, ",")[1]))
	}
	got, err := os.ReadFile(filepath.Join(dir, "enriched.csv")) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assert.Equal(t, want, clitest.Lines(string(got)), "enriched.csv")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "one batch request")
	retry, err := os.ReadFile(filepath.Join(dir, "retry.txt")) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assert.Empty(t, retry, "retry.txt")
}

// riskCells are the two cells the enrichment adds for addr: its risk
// score and categories as lookup ip gives them, empty when addr is not an
// address.
func riskCells(t *testing.T, srv *synthienttest.Server, addr string) string {
	t.Helper()
	if addr == "not-an-address" {
		return ","
	}
	r := clitest.RunSrv(t, srv, "-o", "json", "lookup", "ip", addr)
	clitest.RequireCode(t, r, clierr.OK)
	var l struct {
		Intelligence *struct {
			RiskScore  int      `json:"risk_score"`
			Categories []string `json:"categories"`
		} `json:"intelligence"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &l))
	if l.Intelligence == nil {
		return ","
	}
	return fmt.Sprintf("%d,%s", l.Intelligence.RiskScore, strings.Join(l.Intelligence.Categories, ";"))
}

// The mirror recipe downloads yesterday's export verified, checks it with
// sha256sum, and run again the next time skips the download.
func checkMirrorRecipe(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	srv := synthienttest.NewServer() // on the real clock: the recipe asks date for yesterday
	t.Cleanup(srv.Close)
	day := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	for run := 1; run <= 2; run++ {
		out := runRecipe(t, srv, script, dir)
		assert.Contains(t, out, "mirror/proxies-"+day+".parquet: OK", "run %d: sha256sum's check", run)
	}
	meta := clitest.RunSrv(t, srv, "--jq", ".size", "exports", "meta", "proxies", day)
	clitest.RequireCode(t, meta, clierr.OK)
	info, err := os.Stat(filepath.Join(dir, "mirror", "proxies-"+day+".parquet"))
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(meta.Stdout), fmt.Sprint(info.Size()), "the file's size")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "downloads: the second run skips the day")
}

// The tail recipe appends complete events to the file across the
// stream's clean closes, until it is interrupted.
func checkTailRecipe(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	srv := clitest.NewServer(t, synthienttest.WithMaxEvents(3))
	cmd := recipe(t, srv, script, dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	inGroup(cmd) // Ctrl-C reaches the group
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	file := filepath.Join(dir, "proxies.ndjson")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(file) //nolint:gosec // a file of the test's temporary directory
		return bytes.Count(b, []byte("\n")) >= 7
	}, 2*time.Minute, 20*time.Millisecond, "events appended across reconnects")
	require.NoError(t, signalGroup(cmd, syscall.SIGINT))
	select {
	case <-done: //nolint:errcheck // the shell's exit after Ctrl-C: the file below is what the recipe promises
	case <-time.After(2 * time.Minute):
		_ = signalGroup(cmd, syscall.SIGKILL)
		<-done //nolint:errcheck // the kill's: the failure is reported below
		t.Fatalf("the recipe did not end within 2 minutes of Ctrl-C:\n%s", out.String())
	}
	b, err := os.ReadFile(file) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "the last event is complete")
	for i, l := range clitest.Lines(string(b)) {
		var ev struct {
			IP string `json:"ip"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ev), "line %d: %q", i+1, l)
		assert.NotEmpty(t, ev.IP, "line %d: an event", i+1)
	}
	assert.GreaterOrEqual(t, srv.Arrivals(synthienttest.RouteStream), 3, "streams opened")
	assert.Contains(t, out.String(), "synthient: interrupted", "the command ended on Ctrl-C")
}
