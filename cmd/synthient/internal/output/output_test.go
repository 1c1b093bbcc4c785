package output_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Every other command's --output json is one JSON document (NDJSON for
// exports list --all).
//
//nolint:tparallel // the commands share the fake
func TestJSONOtherCommands(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		docs  int
		field string // a member the (first) document must have
	}{
		{"account", []string{"account"}, 1, "lookup_quota"},
		{"health", []string{"health"}, 1, "status"},
		{"lookup domain", []string{"lookup", "domain", "example.com", "--limit", "2"}, 1, "recent_events"},
		{"exports list", []string{"exports", "list", "proxies", "--limit", "3"}, 1, "next_cursor"},
		{"exports list --all", []string{"exports", "list", "proxies", "--all"}, 17, "checksum"},
		{"exports meta", []string{"exports", "meta", "proxies", "latest"}, 1, "checksum"},
		{"exports download", []string{"exports", "download", "proxies", "latest", "--out", filepath.Join(dir, "f.parquet"), "--verify"}, 1, "verified"},
		{"stream", []string{"stream", "proxies", "--max-events", "2"}, 2, "ip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-o", "json"}, tt.args...)
			r := clitest.RunSrv(t, srv, args...)
			clitest.RequireCode(t, r, 0, args...)
			ls := clitest.Lines(r.Stdout)
			require.Len(t, ls, tt.docs, "lines:\n%s", r.Stdout)
			for i, l := range ls {
				var doc map[string]any
				if !assert.NoError(t, json.Unmarshal([]byte(l), &doc), "line %d is not a JSON object", i+1) { //nolint:testifylint // the next line is checked all the same
					continue
				}
				if i == 0 {
					assert.Contains(t, doc, tt.field, "the first document: %s", l)
				}
			}
		})
	}
	_, err := os.Stat(filepath.Join(dir, "f.parquet"))
	assert.NoError(t, err, "the download's file")
}

// Tests of output.go: --output json, --jq and --template, through the
// commands.

// --jq prints what the expression makes of each result: a string raw,
// anything else as JSON, one value per line, on every command that
// prints JSON.
func TestJQ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want func(t *testing.T, out []string)
	}{
		{"string raw", []string{"--jq", ".ip", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"8.8.8.8"}, out)
		}},
		{"number", []string{"--jq", ".network.asn", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"15169"}, out)
		}},
		{"object", []string{"--jq", "{ip, asn: .network.asn}", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{`{"asn":15169,"ip":"8.8.8.8"}`}, out)
		}},
		{"per result of a batch", []string{"--jq", ".ip", "lookup", "ips", "1.1.1.1", "9.9.9.9", "1.1.1.1"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"1.1.1.1", "9.9.9.9"}, out)
		}},
		{"@csv", []string{"--jq", "[.ip, .network.asn] | @csv", "lookup", "ips", "1.1.1.1", "9.9.9.9"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{`"1.1.1.1",13335`, `"9.9.9.9",19281`}, out)
		}},
		{"many values", []string{"--jq", ".feeds[].id", "exports", "list", "proxies", "--limit", "3"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"2026-06-10/13", "2026-06-10/12", "2026-06-10/11"}, out)
		}},
		{"none", []string{"--jq", "empty", "account"}, func(t *testing.T, out []string) {
			assert.Empty(t, out)
		}},
		{"per stream event", []string{"--jq", ".ip | length > 0", "stream", "proxies", "--max-events", "3"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"true", "true", "true"}, out)
		}},
		{"with -o json", []string{"-o", "json", "--jq", ".lookup_quota.credits", "account"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{strconv.Itoa(synthienttest.DefaultCredits)}, out)
		}},
		{"halt ends the result's values", []string{"--jq", ".ip, halt, .ip", "lookup", "ip", "8.8.8.8"}, func(t *testing.T, out []string) {
			assert.Equal(t, []string{"8.8.8.8"}, out)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, clierr.OK, tt.args...)
			tt.want(t, clitest.Lines(r.Stdout))
		})
	}
}

// --jq does not see the environment: $ENV is empty, so an expression
// cannot print a key held there. (Not parallel: it sets a variable.)
func TestJQReadsNoEnvironment(t *testing.T) {
	t.Setenv("SYNTHIENT_JQ_PROBE", "secret")
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "--jq", "$ENV.SYNTHIENT_JQ_PROBE, env.SYNTHIENT_JQ_PROBE", "health")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"null", "null"}, clitest.Lines(r.Stdout))
}

// --template executes a Go template on each result, numbers as the
// server wrote them, and ends each with a newline.
func TestTemplate(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "--template", `{{.ip}} AS{{.network.asn}} {{.location.latitude}} {{json .location.country}}`,
		"lookup", "ips", "1.1.1.1", "8.8.8.8")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "1.1.1.1 AS13335 37.7749 \"US\"\n8.8.8.8 AS15169 37.3861 \"US\"\n", r.Stdout)

	// A template that ends with a newline gets no second one; one that
	// renders nothing still makes the result's line.
	r = clitest.RunSrv(t, srv, "--template", `{{join "|" .intelligence.categories}}{{"\n"}}`, "lookup", "ip", "203.0.113.7")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "RESIDENTIAL_PROXY\n", r.Stdout)
	r = clitest.RunSrv(t, srv, "--template", `{{with .intelligence}}{{.risk_score}}{{end}}`, "lookup", "ips", "8.8.8.8", "203.0.113.7", "9.9.9.9")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"", "82", ""}, strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n"), "one line per result")

	// Numbers compare as numbers; json writes <, > and & as they are.
	r = clitest.RunSrv(t, srv, "--template", `{{if gt .network.asn 15000}}big{{else}}small{{end}} {{if lt .location.latitude 40.0}}south{{end}} {{json "a<b>&c"}}`,
		"lookup", "ips", "1.1.1.1", "8.8.8.8")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "small south \"a<b>&c\"\nbig south \"a<b>&c\"\n", r.Stdout)
}

// A --jq or --template that cannot run is a usage error before anything
// is sent (exit 2); one that fails on a result is exit 1, with the
// expression's error.
func TestShapeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"jq syntax", []string{"--jq", ".[", "lookup", "ip", "8.8.8.8"}, clierr.Usage, "synthient: --jq '.[': unexpected EOF"},
		{"jq unknown function", []string{"--jq", "nope(1)", "account"}, clierr.Usage, "synthient: --jq 'nope(1)': function not defined: nope/1"},
		{"template syntax", []string{"--template", "{{.ip", "lookup", "ip", "8.8.8.8"}, clierr.Usage, "synthient: template: --template:1: unclosed action"},
		{"both", []string{"--jq", ".", "--template", "x", "account"}, clierr.Usage, "synthient: --jq and --template cannot be combined: pick one"},
		{"jq with csv", []string{"-o", "csv", "--jq", ".", "lookup", "ip", "8.8.8.8"}, clierr.Usage, "synthient: --output csv cannot be combined with --jq or --template"},
		{"jq error", []string{"--jq", `error("boom")`, "lookup", "ip", "8.8.8.8"}, clierr.Failure, "synthient: --jq: error: boom"},
		{"jq type error", []string{"--jq", ".ip + 1", "lookup", "ip", "8.8.8.8"}, clierr.Failure, "synthient: --jq: cannot add: string"},
		{"empty jq", []string{"--jq", "", "lookup", "ip", "8.8.8.8"}, clierr.Usage, "synthient: --jq is empty: give an expression, or leave the flag out"},
		{"empty template", []string{"--template=", "account"}, clierr.Usage, "synthient: --template is empty"},
		{"template error", []string{"--template", "{{.ip.x}}", "lookup", "ip", "8.8.8.8"}, clierr.Failure, "synthient: --template: template: --template:1:5: executing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, tt.code, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.Len(t, clitest.Lines(r.Stderr), 1, "one line on stderr")
			if tt.code == clierr.Usage {
				assert.Empty(t, srv.Requests(), "requests sent")
			}
		})
	}
	r := clitest.Call{Args: []string{"--jq", ".", "demo"}}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage, "demo")
	assert.Equal(t, "synthient: --jq does not apply to demo\n", r.Stderr)
}

// A failure of --jq or --template on one result of many is reported with
// the result's place, and the command goes on with the next, as jq does:
// the results were charged, and the others still print. The command
// exits 1 at the end.
func TestShapeFailureGoesOn(t *testing.T) {
	t.Parallel()
	t.Run("lookup ips", func(t *testing.T) {
		t.Parallel()
		srv := clitest.NewServer(t)
		failed, unknown, files := clitest.OutFiles(t)
		c := clitest.Against(srv, append([]string{"--jq", `if .ip == "8.8.8.8" then error("stop") else .ip end`,
			"lookup", "ips", "--file", "-", "--batch-size", "1", "--concurrency", "1"}, files...)...)
		c.Stdin = strings.NewReader("1.1.1.1\n8.8.8.8\n9.9.9.9\n8.8.4.4\n")
		r := c.Run(t)
		clitest.RequireCode(t, r, clierr.Failure, c.Args...)
		assert.Equal(t, []string{"1.1.1.1", "9.9.9.9", "8.8.4.4"}, clitest.Lines(r.Stdout))
		assert.Contains(t, r.Stderr, "synthient: line 2: --jq: error: stop\n")
		assert.Equal(t, clitest.Summary{Read: 4, LookedUp: 4, Credits: 4}, clitest.ParseSummary(t, r.Stderr), "summary")
		assert.True(t, strings.HasSuffix(r.Stderr, "synthient: --jq failed on 1 document of the results printed (listed above)\n"), "stderr:\n%s", r.Stderr)
		assert.Empty(t, clitest.ReadLines(t, failed), "--failed")
		assert.Empty(t, clitest.ReadLines(t, unknown), "--unknown")
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		srv := clitest.NewServer(t)
		srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Status: 200, ContentType: "application/x-ndjson",
			Body: `{"ip":"1.1.1.1","asn":1}` + "\n" + `{"ip":"2.2.2.2","asn":0}` + "\n" + `{"ip":"3.3.3.3","asn":3}` + "\n"})
		r := clitest.RunSrv(t, srv, "--template", `{{if eq .asn 0}}{{index .nope 1}}{{end}}{{.ip}}`, "stream", "proxies")
		clitest.RequireCode(t, r, clierr.Failure)
		assert.Equal(t, []string{"1.1.1.1", "3.3.3.3"}, clitest.Lines(r.Stdout))
		assert.Contains(t, r.Stderr, "synthient: event 2: --template: ")
		assert.True(t, strings.HasSuffix(r.Stderr, "synthient: --template failed on 1 document of the events printed (listed above)\n"), "stderr:\n%s", r.Stderr)
	})
}

// What --jq and --csv print of a hostile server's strings reaches the
// terminal escaped, and forges no line.
func TestShapesOfHostileServer(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--jq", ".network.isp", "lookup", "ip", "203.0.113.7"},
		{"--jq", "[.. | strings]", "lookup", "ip", "203.0.113.7"},
		{"--template", "{{.network.isp}}", "lookup", "ip", "203.0.113.7"},
		{"-o", "csv", "lookup", "ip", "203.0.113.7"},
		{"-o", "csv", "lookup", "domain", "example.com"},
		{"-o", "csv", "exports", "list", "proxies", "--limit", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Call{Args: append([]string{"--base-url", clitest.HostileFront(t, srv)}, args...), Env: clitest.KeyEnv(srv)}
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.OK, c.Args...)
			clitest.CheckTerminalSafe(t, "stdout", r.Stdout)
			clitest.AssertNoForgedLine(t, "stdout", r.Stdout)
			clitest.CheckHostileVisible(t, r, args[1] == "[.. | strings]", false)
		})
	}
}

// decodeLines decodes each line of out as JSON.
func decodeLines(t *testing.T, out string) []any {
	t.Helper()
	var vs []any
	for _, l := range clitest.Lines(out) {
		var v any
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %q", l)
		vs = append(vs, v)
	}
	return vs
}

// --jq . prints each result as JSON with the values of --output json.
func TestJQIdentity(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	args := []string{"lookup", "ips", "1.1.1.1", "8.8.8.8"}
	asJSON := clitest.RunSrv(t, srv, append([]string{"-o", "json"}, args...)...)
	viaJQ := clitest.RunSrv(t, srv, append([]string{"--jq", "."}, args...)...)
	clitest.RequireCode(t, asJSON, clierr.OK)
	clitest.RequireCode(t, viaJQ, clierr.OK)
	assert.Equal(t, decodeLines(t, asJSON.Stdout), decodeLines(t, viaJQ.Stdout))
}
