package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/api"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

// api sends a path with the key and prints its JSON, which --jq shapes;
// --input sends a body (POST), from a file or stdin.
func TestAPI(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "api", "account/me", "--jq", ".email")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "grace@example.com\n", r.Stdout)

	r = clitest.RunSrv(t, srv, "api", "/feeds/proxies/export?limit=2", "--jq", ".feeds[].id")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"2026-06-10/13", "2026-06-10/12"}, clitest.Lines(r.Stdout))

	file := filepath.Join(t.TempDir(), "ips.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"ips": ["1.1.1.1", "8.8.8.8"]}`), 0o600))
	r = clitest.RunSrv(t, srv, "api", "lookup/ips", "--input", file, "--jq", ".results[].ip")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.Lines(r.Stdout))
	c := clitest.Against(srv, "api", "-X", "POST", "lookup/ips", "--input", "-")
	c.Stdin = strings.NewReader(`{"ips":["9.9.9.9"]}`)
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, `"ip":"9.9.9.9"`)
}

// An answer without a body (a HEAD) prints nothing, not an empty line.
func TestAPIHeadPrintsNothing(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	for _, tty := range []bool{false, true} {
		c := clitest.Against(srv, "api", "-X", "HEAD", "account/me")
		c.TTYOut = tty
		r := c.Run(t)
		clitest.RequireCode(t, r, clierr.OK)
		assert.Empty(t, r.Stdout, "stdout (terminal: %v)", tty)
		assert.Empty(t, r.Stderr, "stderr (terminal: %v)", tty)
	}
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteAccount))
}

// A billed route keeps the billed rules: a 503 on a lookup is not sent
// again; an API error is the command's error, exit 3.
func TestAPIBilled(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	r := clitest.RunSrv(t, srv, "api", "lookup/ip/8.8.8.8")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "503 Service Unavailable")
	assert.Contains(t, r.Stderr, "may_have_been_processed")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "not sent again")

	r = clitest.RunSrv(t, srv, "api", "no/such/route")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "404 Not Found")
}

// --max-credits N sends a lookup route only when its cost fits in N
// (exit 3 otherwise, nothing sent); a free route is sent whatever N.
func TestAPIMaxCredits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		max   string
		route string
		sent  bool
	}{
		{[]string{"lookup/ip/8.8.8.8"}, "0", synthienttest.RouteLookupIP, false},
		{[]string{"lookup/ip/8.8.8.8"}, "1", synthienttest.RouteLookupIP, true},
		{[]string{"lookup/domain/example.com"}, "0", synthienttest.RouteLookupDomain, false},
		{[]string{"lookup/ips", "-F", "ips[]=1.1.1.1", "-F", "ips[]=8.8.8.8", "-F", "ips[]=9.9.9.9"}, "2", synthienttest.RouteLookupIPs, false},
		{[]string{"lookup/ips", "-F", "ips[]=1.1.1.1", "-F", "ips[]=8.8.8.8", "-F", "ips[]=9.9.9.9"}, "3", synthienttest.RouteLookupIPs, true},
		{[]string{"account/me"}, "0", synthienttest.RouteAccount, true},
	}
	for _, tt := range tests {
		args := append(append([]string{"api"}, tt.args...), "--max-credits", tt.max)
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			r := clitest.RunSrv(t, srv, args...)
			if tt.sent {
				clitest.RequireCode(t, r, clierr.OK, args...)
				assert.Equal(t, 1, srv.Arrivals(tt.route))
				return
			}
			clitest.RequireFails(t, r, clierr.API, "refused by the credit budget (request not sent)", args...)
			assert.Zero(t, srv.Arrivals(tt.route), "requests sent")
			assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey))
		})
	}
}

// A path outside the base URL, and --input that is not JSON, are refused
// before anything is sent.
func TestAPIRefuses(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	// After the parallel subtests, before the fake closes.
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") })
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("ips=1.1.1.1"), 0o600))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"api", "https://evil.example/api/v4/account/me"}, `"https://evil.example/api/v4/account/me" is not a path below the base URL ` + srv.URL},
		{[]string{"api", "../health"}, "leaves the base URL"},
		{[]string{"api", "lookup/ips", "--input", bad}, "--input " + bad + " is not JSON"},
		{[]string{"api"}, "missing PATH: api takes PATH"},
		{[]string{"-o", "csv", "api", "account/me"}, "--output csv applies to"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
		})
	}
}

// A stream's lines are printed as they come; a download's redirect is not
// followed, and its presigned URL not printed.
func TestAPIStreamAndRedirect(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t, synthienttest.WithMaxEvents(3))
	r := clitest.RunSrv(t, srv, "api", "feeds/proxies/stream", "--jq", ".ip | length > 0")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, []string{"true", "true", "true"}, clitest.Lines(r.Stdout))

	r = clitest.RunSrv(t, srv, "api", "feeds/proxies/export/latest")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "307 Temporary Redirect: the answer is a redirect to the storage host, not followed")
	assert.NotContains(t, r.Stderr, srv.StorageURL, "the presigned URL")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteStorage))
}

// On a terminal the answer is indented, as gh api prints it; piped, it is
// one compact line. --jq shapes it either way.
func TestAPIPrettyOnTerminal(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c := clitest.Against(srv, "api", "account/me")
	c.TTYOut = true
	r := c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.True(t, strings.HasPrefix(r.Stdout, "{\n  \"first_name\": \"Grace\",\n  \"last_name\": \"Hopper\",\n"), "on a terminal: %q", r.Stdout)
	assert.Contains(t, r.Stdout, "\n  \"lookup_quota\": {\n    \"credits\": ")
	assert.True(t, strings.HasSuffix(r.Stdout, "\n}\n"), "on a terminal: %q", r.Stdout)

	r = clitest.RunSrv(t, srv, "api", "account/me")
	clitest.RequireCode(t, r, clierr.OK)
	require.Len(t, clitest.Lines(r.Stdout), 1, "piped: one line")
	assert.True(t, strings.HasPrefix(r.Stdout, `{"first_name":"Grace","last_name":"Hopper",`), "piped: %q", r.Stdout)
	assert.True(t, strings.HasSuffix(r.Stdout, "}\n"), "piped: compact, nothing after the document: %q", r.Stdout)

	c = clitest.Against(srv, "api", "account/me", "--jq", ".email")
	c.TTYOut = true
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Equal(t, "grace@example.com\n", r.Stdout)

	// Indented, a hostile answer's strings are as escaped as on one line.
	c = clitest.Call{Args: []string{"--base-url", clitest.HostileFront(t, srv), "api", "account/me"}, Env: clitest.KeyEnv(srv), TTYOut: true}
	r = c.Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	clitest.CheckTerminalSafe(t, "stdout", r.Stdout)
	clitest.CheckHostileVisible(t, r, true, false)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &v), "the indented answer is JSON")
}

// request is what the recording server received.
type request struct{ Method, URI, Body string }

// recorder serves {"ok":true} to every request and records it.
type recorder struct {
	mu   sync.Mutex
	reqs []request
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, request{r.Method, r.RequestURI, string(b)})
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (rec *recorder) last(t *testing.T) request {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.reqs, "requests")
	return rec.reqs[len(rec.reqs)-1]
}

// -F/--field (typed) and --raw-field (a string) build the query of a GET
// and the JSON body of any other method, as gh api's do; the default
// method is GET, and POST on lookup/ips, the API's one POST route, or
// with --input, whose body the fields then leave alone: they go to the
// query.
func TestAPIFields(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	base := clitest.ServeFront(t, rec)
	dir := t.TempDir()
	file := filepath.Join(dir, "note.txt")
	require.NoError(t, os.WriteFile(file, []byte("from a file\n"), 0o600))
	body := filepath.Join(dir, "body.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"ips":["1.1.1.1"]}`), 0o600))
	run := func(stdin string, args ...string) request {
		t.Helper()
		c := clitest.Call{Args: append([]string{"--base-url", base, "api"}, args...), Env: map[string]string{"SYNTHIENT_API_KEY": clitest.ConfiguredKey}}
		c.Stdin = strings.NewReader(stdin)
		r := c.Run(t)
		clitest.RequireCode(t, r, clierr.OK, args...)
		assert.Equal(t, "{\"ok\":true}\n", r.Stdout)
		return rec.last(t)
	}
	tests := []struct {
		stdin string
		args  []string
		want  request
	}{
		{"", []string{"feeds/proxies/export", "-F", "limit=5", "--raw-field", "cursor=a b&c"},
			request{"GET", "/api/v4/feeds/proxies/export?cursor=a+b%26c&limit=5", ""}},
		{"", []string{"feeds/proxies/export?limit=2", "--field", "cursor=x"},
			request{"GET", "/api/v4/feeds/proxies/export?cursor=x&limit=2", ""}},
		{"", []string{"lookup/ips", "-F", "ips[]=1.1.1.1", "-F", "ips[]=8.8.8.8"},
			request{"POST", "/api/v4/lookup/ips", `{"ips":["1.1.1.1","8.8.8.8"]}`}},
		{"from stdin", []string{"x/y", "-X", "POST", "-F", "n=5", "-F", "neg=-12", "-F", "t=true", "-F", "f=false", "-F", "z=null",
			"-F", "s=text", "-F", "file=@" + file, "-F", "in=@-", "--raw-field", "r=5", "-F", "a[]=1", "-F", "o[k][l]=v", "-F", "e=", "-F", "eq=a=b", "-F", "x=1.5"},
			request{"POST", "/api/v4/x/y", `{"a":[1],"e":"","eq":"a=b","f":false,"file":"from a file\n","in":"from stdin","n":5,"neg":-12,"o":{"k":{"l":"v"}},"r":"5","s":"text","t":true,"x":"1.5","z":null}`}},
		{"", []string{"lookup/ips", "--input", body, "-F", "dry=true"},
			request{"POST", "/api/v4/lookup/ips?dry=true", `{"ips":["1.1.1.1"]}`}},
		{"", []string{"x/y", "-X", "patch", "--raw-field", "k=v"},
			request{"PATCH", "/api/v4/x/y", `{"k":"v"}`}},
	}
	for _, tt := range tests {
		got := run(tt.stdin, tt.args...)
		assert.Equal(t, tt.want, got, "%v", tt.args)
	}
}

// A method that is not an RFC 9110 token, and a field that is not
// key=value, are usage errors that name them, before anything is sent
// (also before a key is looked for).
func TestAPIRefusesMethodsAndFields(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") })
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-X", "GET@evil", "account/me"}, `-X "GET@evil" is not an HTTP method`},
		{[]string{"-X", "GET /x", "account/me"}, `-X "GET /x" is not an HTTP method`},
		{[]string{"--method", "G\r\nX-Evil: 1", "account/me"}, `-X "G\r\nX-Evil: 1" is not an HTTP method`},
		{[]string{"-X", "", "account/me"}, `-X "" is not an HTTP method`},
		{[]string{"-F", "limit", "account/me"}, `-F "limit" is not key=value`},
		{[]string{"--raw-field", "=v", "account/me"}, `--raw-field "=v" is not key=value`},
		{[]string{"-F", "a[b=1", "account/me"}, `-F "a[b=1": the key "a[b" is not name, name[sub]... or name[]`},
		{[]string{"-F", "a[]x=1", "account/me"}, `the key "a[]x" is not name`},
		{[]string{"-X", "POST", "-F", "a=1", "-F", "a[b]=2", "account/me"}, `-F "a[b]=2": a is given twice, as a value and as an object or list`},
		{[]string{"x", "-F", "x=1", "-F", "x[a]=2"}, `-F "x[a]=2": x is given twice, as a value and as an object or list`},
		{[]string{"-X", "HEAD", "-F", "a[]=1", "-F", "a=2", "account/me"}, `-F "a=2": a is given twice`},
		{[]string{"--raw-field", "a=1", "-F", "a[]=@" + filepath.Join(t.TempDir(), "missing"), "account/me"}, `-F "a[]=@`},
		{[]string{"-X", "POST", "-F", "a=null", "-F", "a[]=1", "account/me"}, `-F "a[]=1": a is given twice`},
		{[]string{"-F", "f=@" + filepath.Join(t.TempDir(), "missing"), "account/me"}, "-F f=@"},
		{[]string{"-F", "a=@-", "--input", "-", "lookup/ips"}, "stdin is read once: by one of --input - and -F KEY=@-"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"api"}, tt.args...)
			clitest.RequireFails(t, clitest.RunSrv(t, srv, args...), clierr.Usage, tt.want, args...)
			if strings.Contains(tt.want, "HTTP method") || strings.Contains(tt.want, "key=value") {
				// Without a key: the mistake is named first.
				clitest.RequireFails(t, clitest.RunArgs(t, nil, args...), clierr.Usage, tt.want, args...)
			}
		})
	}
}

// Whatever PATH holds, the request goes to the configured API host, or
// nowhere: no scheme, authority, backslash or escape in it reaches another
// host.
func TestAPIStaysOnItsHost(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	evil := &recorder{}
	evilURL := strings.TrimSuffix(clitest.ServeFront(t, evil), "/api/v4")
	evilHost := strings.TrimPrefix(evilURL, "http://")
	for _, path := range []string{
		evilURL + "/api/v4/account/me",
		"//" + evilHost + "/api/v4/account/me",
		"///" + evilHost + "/x",
		"/api/v4//" + evilHost + "/x",
		"/api/v4///" + evilHost + "/x",
		"%2F%2F" + evilHost + "/x",
		"http:" + evilHost + "/x",
		"http:/" + evilHost + "/x",
		`\\` + evilHost + `\x`,
		"/\\" + evilHost + "/x",
		srv.URL + "@" + evilHost + "/x",
		srv.URL + "/@" + evilHost + "/x",
		srv.URL + "/../../@" + evilHost + "/x",
		strings.Replace(srv.URL, "http://", "http://user@", 1) + "/account/me",
		strings.ToUpper(srv.URL[:4]) + srv.URL[4:] + "/x",
		"account/me#@" + evilHost,
		"account/me?next=//" + evilHost,
		"account/me\r\nHost: " + evilHost,
	} {
		r := clitest.RunSrv(t, srv, "api", path)
		assert.Contains(t, []int{clierr.OK, clierr.Usage, clierr.API}, r.Code, "api %q: %s", path, r.Stderr)
	}
	evil.mu.Lock()
	defer evil.mu.Unlock()
	assert.Empty(t, evil.reqs, "requests that reached another host")
}

// api parses its command line before anything is read or sent (its runF
// seam): the method, given (as typed) or by default (POST with --input,
// or with fields on lookup/ips; else GET), the fields, and the indented
// JSON of a terminal; a method that is not a token, a field that is not
// KEY=VALUE and stdin read twice are usage errors.
func TestAPIParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args         []string
		terminal     bool
		method, want string // the method parsed; else want, the error
		fields       []string
	}{
		{args: []string{"account/me"}, method: "GET"},
		{args: []string{"account/me"}, terminal: true, method: "GET"},
		{args: []string{"lookup/ips", "-F", "ips[]=1.1.1.1", "--raw-field", "ips[]=8.8.8.8"}, method: "POST", fields: []string{"ips[]=1.1.1.1"}},
		{args: []string{"/api/v4/lookup/ips/?x=1", "-F", "ips[]=1.1.1.1"}, method: "POST", fields: []string{"ips[]=1.1.1.1"}},
		{args: []string{"feeds/proxies/export", "-F", "limit=2"}, method: "GET", fields: []string{"limit=2"}},
		{args: []string{"lookup/ips", "--input", "ips.json"}, method: "POST"},
		{args: []string{"-X", "delete", "account/me"}, method: "delete"},
		{args: []string{"-X", "GET@evil", "account/me"}, want: `-X "GET@evil" is not an HTTP method`},
		{args: []string{"-F", "limit", "account/me"}, want: `-F "limit" is not key=value`},
		{args: []string{"-F", "a=@-", "--input", "-", "lookup/ips"}, want: "stdin is read once"},
		{args: []string{}, want: "missing PATH"},
	} {
		t.Run(fmt.Sprint(tt.args, tt.terminal), func(t *testing.T) {
			t.Parallel()
			var seam clitest.Seam[api.Options]
			f := clitest.Factory(iostreams.System{StdoutIsTerminal: func() bool { return tt.terminal }})
			err := clitest.Parse(t, api.NewCmdAPI(f, seam.RunF), tt.args...)
			if !seam.Parsed(t, err, tt.want) {
				return
			}
			got := seam.Got
			assert.Equal(t, tt.method, got.Method)
			assert.Equal(t, tt.fields, got.Fields)
			assert.Equal(t, tt.terminal, got.Pretty, "indented on a terminal")
		})
	}
}
