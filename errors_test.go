package synthient_test

// Tests of errors.go: the typed errors, what their text holds, what
// errors.As reaches from them, and that no rendering of an error and no
// log line holds a secret: first on the scripted httpmock transport (every
// operation, inside synctest bubbles), then end to end against the fake
// API with faults on every route, storage included.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// TestAPIErrorMessageIsTheStatusAlone checks that Error() is exactly the
// status code and its standard text, or the bare code, with nothing from
// the body, the headers or the URL.
func TestAPIErrorMessageIsTheStatusAlone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		want   string
	}{
		{429, "429 Too Many Requests"},
		{503, "503 Service Unavailable"},
		{418, "418 I'm a teapot"},
		{599, "599"},
		{404, "404 Not Found"},
		{422, "422 Unprocessable Entity"},
		{402, "402 Payment Required"},
		{452, "452"},
	}
	body := `{"type":"https://docs.synthient.com/errors/SECRET-type","title":"SECRET-title",` +
		`"detail":"SECRET-detail","instance":"/api/v4/SECRET-instance","errors":{"SECRET-field":["SECRET-msg"]}}`
	verbs := []string{"%s", "%v", "%+v"}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			m := newOpMock(t, opNamed("LookupIP"), answer(tc.status, body,
				"Content-Type", "application/problem+json", "X-Request-Id", "SECRET-request-id"))
			_, err := m.Client(t).LookupIP(context.Background(), testIP)
			ae := requireAPIErr(t, err, tc.status)
			for _, f := range verbs {
				assert.Equal(t, tc.want, fmt.Sprintf(f, ae), "Sprintf(%q, APIError)", f)
			}
			// The call returns the *APIError itself: the error a caller
			// logs is the status alone.
			assert.Equal(t, tc.want, err.Error(), "the call's error")
			assert.Equal(t, "SECRET-title", ae.Title, "Title: the body was not parsed")
			assert.Equal(t, "SECRET-detail", ae.Detail, "Detail: the body was not parsed")
			for _, f := range verbs {
				s := fmt.Sprintf(f, err)
				for _, bad := range []string{"SECRET", "api.test", testKey} {
					assert.NotContains(t, s, bad, "Sprintf(%q, err) holds server text, the URL or the key", f)
				}
			}
			// A value built by hand says the same.
			assert.Equal(t, tc.want, (&synthient.APIError{Status: tc.status, Title: "x", Detail: "y"}).Error(),
				"(&APIError{Status: %d}).Error()", tc.status)
		})
	}
}

// An *Error's text: "synthient: ", the operation, then the message and the
// cause, whichever are set.
func TestErrorMessage(t *testing.T) {
	t.Parallel()
	cause := errors.New("the cause")
	cases := []struct {
		name string
		err  *synthient.Error
		want string
	}{
		{"message and cause", &synthient.Error{Op: "DownloadExportFile", Message: "creating the file", Err: cause},
			"synthient: DownloadExportFile: creating the file: the cause"},
		{"message", &synthient.Error{Op: "AllExports", Message: "the export listing repeated a cursor"},
			"synthient: AllExports: the export listing repeated a cursor"},
		{"cause", &synthient.Error{Op: "Account", Err: cause}, "synthient: Account: the cause"},
		{"neither", &synthient.Error{Op: "Account"}, "synthient: Account: request failed"},
		{"no operation", &synthient.Error{Err: cause}, "synthient: the cause"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
}

// TestAPIErrorRequestID checks that RequestID is the X-Request-Id header,
// else the problem's instance.
func TestAPIErrorRequestID(t *testing.T) {
	t.Parallel()
	const (
		withInstance = `{"title":"Not Found","status":404,"instance":"/api/v4/lookup/ip/1.2.3.4#req-from-instance"}`
		noInstance   = `{"title":"Not Found"}`
		problemType  = "application/problem+json"
	)
	cases := []struct {
		name   string
		answer httpmock.Responder
		want   string
	}{
		{"header_wins", answer(404, withInstance, "Content-Type", problemType, "X-Request-Id", "req-from-header"),
			"req-from-header"},
		{"instance_without_header", answer(404, withInstance, "Content-Type", problemType),
			"/api/v4/lookup/ip/1.2.3.4#req-from-instance"},
		{"header_without_instance", answer(404, noInstance, "Content-Type", problemType, "X-Request-Id", "req-only-header"),
			"req-only-header"},
		{"neither", answer(404, noInstance, "Content-Type", problemType), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newOpMock(t, opNamed("LookupIP"), tc.answer)
			_, err := m.Client(t).LookupIP(context.Background(), testIP)
			assert.Equal(t, tc.want, requireAPIErr(t, err, 404).RequestID, "RequestID")
		})
	}
}

// TestAPIErrorProblemDetails checks that the members of a problem details
// body land in the APIError, whatever JSON media type carries them.
func TestAPIErrorProblemDetails(t *testing.T) {
	t.Parallel()
	const validation = `{
  "type": "https://docs.synthient.com/errors/validation",
  "title": "Validation error",
  "status": 422,
  "detail": "2 fields are invalid",
  "instance": "/api/v4/lookup/ips",
  "errors": {
    "ips": ["must contain between 1 and 1000 entries"],
    "ips[3]": ["must be a valid IP address", "must not be empty"]
  }
}`
	wantErrors := map[string][]string{
		"ips":    {"must contain between 1 and 1000 entries"},
		"ips[3]": {"must be a valid IP address", "must not be empty"},
	}
	for _, ct := range []string{"application/problem+json", "application/json", "application/problem+json; charset=utf-8"} {
		t.Run(ct, func(t *testing.T) {
			t.Parallel()
			m := newOpMock(t, opNamed("LookupIPs"), answer(422, validation, "Content-Type", ct))
			_, err := m.Client(t).LookupIPs(context.Background(), []netip.Addr{testIP})
			ae := requireAPIErr(t, err, 422)
			assert.Equal(t, "https://docs.synthient.com/errors/validation", ae.Type, "Type")
			assert.Equal(t, "Validation error", ae.Title, "Title")
			assert.Equal(t, "2 fields are invalid", ae.Detail, "Detail")
			assert.Equal(t, "/api/v4/lookup/ips", ae.RequestID, "RequestID")
			assert.Equal(t, wantErrors, ae.Errors, "Errors")
			assert.Nil(t, ae.RetryAfter, "RetryAfter")
			assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
		})
	}
	t.Run("errors_as_map_of_strings", func(t *testing.T) {
		t.Parallel()
		m := newOpMock(t, opNamed("LookupIP"), answer(422, `{"title":"Validation error","errors":{"ip_address":"must be a valid IP address"}}`,
			"Content-Type", "application/problem+json"))
		_, err := m.Client(t).LookupIP(context.Background(), testIP)
		assert.Equal(t, map[string][]string{"ip_address": {"must be a valid IP address"}}, requireAPIErr(t, err, 422).Errors, "Errors")
	})
	t.Run("no_errors_member", func(t *testing.T) {
		t.Parallel()
		m := newOpMock(t, opNamed("LookupIP"), problem(403))
		_, err := m.Client(t).LookupIP(context.Background(), testIP)
		assert.Empty(t, requireAPIErr(t, err, 403).Errors, "Errors")
	})
}

// TestAPIErrorTextPlainBody checks that a text/plain error body (the
// edge's 401 for a malformed key) becomes Detail.
func TestAPIErrorTextPlainBody(t *testing.T) {
	t.Parallel()
	m := newOpMock(t, opNamed("Account"), answer(401, "Invalid API Key\n", "Content-Type", "text/plain; charset=utf-8"))
	_, err := m.Client(t).Account(context.Background())
	ae := requireAPIErr(t, err, 401)
	assert.Equal(t, "Invalid API Key", strings.TrimSpace(ae.Detail), "Detail")
	assert.Empty(t, ae.Title, "Title")
	assert.Empty(t, ae.Type, "Type")
	assert.Equal(t, "401 Unauthorized", ae.Error(), "Error()")
	assert.Equal(t, 1, m.GetTotalCallCount(), "requests")
}

// TestAPIErrorFromABodyThatDoesNotParse checks that an error status gives an
// *APIError with its Status whatever its body.
func TestAPIErrorFromABodyThatDoesNotParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		kv   []string // header pairs
	}{
		{"problem_json_truncated", `{"type":"https://x","title":"Bad`, []string{"Content-Type", "application/problem+json"}},
		{"problem_json_not_an_object", `["a","b"]`, []string{"Content-Type", "application/problem+json"}},
		{"empty_problem_json", "", []string{"Content-Type", "application/problem+json"}},
		{"empty_no_content_type", "", nil},
		{"html", "<html><body><h1>400 Bad Request</h1></body></html>", []string{"Content-Type", "text/html"}},
		{"binary", "\x00\xff\xfe{", []string{"Content-Type", "application/octet-stream"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newOpMock(t, opNamed("LookupIP"), answer(400, tc.body, tc.kv...))
			_, err := m.Client(t).LookupIP(context.Background(), testIP)
			ae := requireAPIErr(t, err, 400)
			assert.Equal(t, "400 Bad Request", ae.Error(), "Error()")
			assert.Empty(t, ae.Type, "Type from a body that does not parse")
			assert.Empty(t, ae.Title, "Title from a body that does not parse")
			assert.Empty(t, ae.Errors, "Errors from a body that does not parse")
			if tc.body == "" {
				assert.Empty(t, ae.Detail, "Detail from an empty body")
			}
		})
	}
}

// TestAPIErrorBodyIsReadUpTo64KiB checks that no more than 64 KiB of an
// error body ends up in the APIError.
func TestAPIErrorBodyIsReadUpTo64KiB(t *testing.T) {
	t.Parallel()
	m := newOpMock(t, opNamed("Account"), answer(401, strings.Repeat("x", 1<<20), "Content-Type", "text/plain"))
	_, err := m.Client(t).Account(context.Background())
	ae := requireAPIErr(t, err, 401)
	assert.NotEmpty(t, ae.Detail, "Detail")
	assert.LessOrEqual(t, len(ae.Detail), 64<<10, "len(Detail)")
}

// TestEveryTypedErrorReachesTheBaseError checks errors.As(err, new(*Error))
// on each typed error, with Op, Attempts and StopReason.
func TestEveryTypedErrorReachesTheBaseError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		op       string
		script   []httpmock.Responder
		check    func(t *testing.T, err error)
		attempts int
		reason   synthient.StopReason
	}{
		{"APIError", "LookupIP", []httpmock.Responder{problem(402)}, func(t *testing.T, err error) {
			_ = requireAPIErr(t, err, 402)
		}, 1, retry.NotRetryable},
		{"APIError_after_retries", "Account", []httpmock.Responder{problem(503)}, func(t *testing.T, err error) {
			_ = requireAPIErr(t, err, 503)
		}, 3, retry.AttemptsExhausted},
		{"ConnectionError", "LookupDomain", []httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset by peer"))},
			func(t *testing.T, err error) {
				_ = requireConnErr(t, err, false, false)
			}, 1, retry.MayHaveBeenProcessed},
		{"ConnectionError_not_sent", "Account", []httpmock.Responder{httpmock.NewErrorResponder(dialRefused())},
			func(t *testing.T, err error) {
				_ = requireConnErr(t, err, true, false)
				assert.ErrorIs(t, err, syscall.ECONNREFUSED, "the cause is not reachable with errors.Is")
			}, 3, retry.AttemptsExhausted},
		{"TimeoutError", "LookupIPs", []httpmock.Responder{httpmock.NewErrorResponder(timeoutError{})},
			func(t *testing.T, err error) {
				// NotSent is false: the timeout came after the request left.
				_ = requireConnErr(t, err, false, true)
			}, 1, retry.MayHaveBeenProcessed},
		{"DecodeError", "Account", []httpmock.Responder{answer(200, `{"email":`, "Content-Type", "application/json")},
			func(t *testing.T, err error) {
				var de *synthient.DecodeError
				require.ErrorAs(t, err, &de)
				assert.Equal(t, 200, de.Status, "DecodeError.Status")
			}, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newOpMock(t, op, tc.script...)
				err := op.call(context.Background(), m.Client(t))
				require.Error(t, err)
				tc.check(t, err)
				base := requireStop(t, err, tc.attempts, tc.reason)
				assert.Equal(t, tc.op, base.Op, "Error.Op")
			})
		})
	}
}

// TestKeyNeverInErrorsOrLogs runs every operation into each kind of
// failure with a Debug logger, and then a call cancelled during a wait,
// one whose deadline is too short for the wait, one with a query, one
// with an invalid argument and one on a closed client. Neither the error
// (in every rendering) nor the log may hold the API key, and the log holds
// no query.
func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range keyCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				logger, logs := newLogger()
				m := newOpMock(t, tc.op, tc.script...)
				c := m.Client(t, synthient.WithLogger(logger))
				call := tc.call
				if call == nil {
					call = tc.op.call
				}
				err := call(context.Background(), c)
				if tc.fails {
					require.Error(t, err)
				} else {
					require.NoError(t, err)
				}
				assertNoSecret(t, err, logs)
				out := logs.String()
				if tc.logs {
					assert.NotEmpty(t, out, "the log")
				}
				assert.NotContains(t, out, "limit=", "the log holds a query")
				assert.NotContains(t, out, "?", "the log holds a query")
			})
		})
	}
}

// keyCase is one case of TestKeyNeverInErrorsOrLogs.
type keyCase struct {
	name   string
	op     opCase
	script []httpmock.Responder
	call   callFunc // nil: op.call
	fails  bool
	logs   bool // the call logs at least one line
}

// keyCases returns the cases of TestKeyNeverInErrorsOrLogs: each failure
// on every operation, then the five special calls.
func keyCases() []keyCase {
	var cases []keyCase
	for _, sc := range []struct {
		name   string
		script []httpmock.Responder
		fails  bool
	}{
		{"429", []httpmock.Responder{problem(429)}, true},
		{"429_retry_after_61", []httpmock.Responder{problem(429, "Retry-After", "61")}, true},
		{"503", []httpmock.Responder{problem(503)}, true},
		{"401_text", []httpmock.Responder{answer(401, "Invalid API Key", "Content-Type", "text/plain")}, true},
		{"reset", []httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset by peer"))}, true},
		{"dial_refused", []httpmock.Responder{httpmock.NewErrorResponder(dialRefused())}, true},
		{"timeout", []httpmock.Responder{httpmock.NewErrorResponder(timeoutError{})}, true},
		{"undecodable", []httpmock.Responder{answer(200, `{"ip":`, "Content-Type", "application/json")}, true},
		{"429_retry_after_1_then_200", []httpmock.Responder{problem(429, "Retry-After", "1"), opSucceeds}, false},
		{"200", []httpmock.Responder{opSucceeds}, false},
	} {
		for _, op := range operations() {
			cases = append(cases, keyCase{name: sc.name + "/" + op.name, op: op, script: sc.script, fails: sc.fails, logs: true})
		}
	}
	waitOut30s := []httpmock.Responder{problem(429, "Retry-After", "30")}
	cases = append(cases,
		keyCase{name: "cancelled_during_a_wait", op: opNamed("Account"), script: waitOut30s, fails: true, logs: true,
			call: func(ctx context.Context, c *synthient.Client) error {
				ctx, cancel := context.WithCancel(ctx)
				go func() { time.Sleep(time.Second); cancel() }()
				return callAccount(ctx, c)
			}},
		keyCase{name: "deadline_shorter_than_the_wait", op: opNamed("Account"), script: waitOut30s, fails: true, logs: true,
			call: func(ctx context.Context, c *synthient.Client) error {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				return callAccount(ctx, c)
			}},
		keyCase{name: "LookupDomain_with_a_query", op: opNamed("LookupDomain"), script: waitOut30s, fails: true, logs: true,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupDomain(ctx, "example.org", &synthient.DomainLookupParams{Limit: 7})
				return err
			}},
		keyCase{name: "invalid_argument", op: opNamed("LookupIP"), fails: true,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupIP(ctx, netip.Addr{})
				return err
			}},
		keyCase{name: "closed_client", op: opNamed("Account"), fails: true,
			call: func(ctx context.Context, c *synthient.Client) error {
				c.Close()
				return callAccount(ctx, c)
			}},
	)
	return cases
}

// The *Error that errors.As builds over a typed error names the operation
// once: a *ConnectionError's text already starts with it, an *APIError's
// does not.
func TestBaseErrorOfATypedErrorNamesTheOperationOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
	}{
		{"APIError", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no such thing", http.StatusNotFound) }},
		{"ConnectionError", func(w http.ResponseWriter, r *http.Request) { takeOver(t, w, r) }}, // closed without an answer
		{"DecodeError", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, "[") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { tc.serve(w, r) })
			c := newClient(t, srv.Base, synthient.WithMaxRetries(0))
			_, err := c.Account(context.Background())
			var base *synthient.Error
			require.ErrorAs(t, err, &base)
			assert.Equal(t, 1, strings.Count(base.Error(), "Account"), "base error %q: times it names the operation", base)
		})
	}
}

// ---- No secret end to end ----

// errorList returns the errors of errs that are not nil.
func errorList(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// seqErrors ranges over seq, keeping at most max items, and returns the
// errors it yielded.
func seqErrors[T any](seq iter.Seq2[T, error], max int) []error {
	_, errs, _ := drain(seq, max)
	return errs
}

// streamErrors returns a call that opens a stream with open, reads at
// most max events and returns the errors.
func streamErrors[T any](open func(*synthient.Client, context.Context) iter.Seq2[T, error], max int) func(context.Context, *synthient.Client) []error {
	return func(ctx context.Context, c *synthient.Client) []error { return seqErrors(open(c, ctx), max) }
}

// presignedSecrets returns the parts of a presigned Location that no
// error or log line may hold: its query (raw and unescaped), its signature
// and its credential (raw and escaped).
func presignedSecrets(t *testing.T, location string) []string {
	t.Helper()
	u, err := url.Parse(location)
	require.NoError(t, err, "Location %q", location)
	require.NotEmpty(t, u.RawQuery, "Location %q is not a presigned URL", location)
	q := u.Query()
	sig := q.Get("X-Amz-Signature")
	require.GreaterOrEqual(t, len(sig), 16, "Location %q has no X-Amz-Signature", location)
	out := []string{u.RawQuery, sig}
	if unescaped, err := url.QueryUnescape(u.RawQuery); err == nil {
		out = append(out, unescaped)
	}
	if cred := q.Get("X-Amz-Credential"); cred != "" {
		out = append(out, cred, url.QueryEscape(cred))
	}
	return out
}

// TestNoSecretInLogsOrErrors runs every operation end to end against the
// fake, first without a fault, then with injected faults of every kind on
// several routes (storage too), each case on a client of its own with a
// Debug logger and a response hook that learns each download's presigned
// Location. Neither the case's log nor any rendering (Error, %v, %+v, %#v)
// of any error it returned, or of anything in its chain, may hold the API
// key, or the query, signature or credential of a presigned URL seen so
// far. The cases run in turn on one fake: a fault is injected for the
// case's own call.
//
//nolint:paralleltest // the cases share one fake, on which each injects the faults of its own call, in turn
func TestNoSecretInLogsOrErrors(t *testing.T) {
	clk := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithEventInterval(2*time.Millisecond),
		synthienttest.WithStreamLimit(16),
	)
	t.Cleanup(srv.Close)

	var (
		mu        sync.Mutex
		locations []string               // every presigned Location the hooks saw
		known     = []string{srv.APIKey} // the secrets seen so far
		errCount  int
		allLogs   strings.Builder
	)
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusTemporaryRedirect {
			mu.Lock()
			locations = append(locations, ri.Header.Get("Location"))
			mu.Unlock()
		}
		return nil
	}
	for _, tc := range secretCases(t.TempDir()) {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := newLogger()
			c := fakeClient(t, srv,
				synthient.WithTimeout(500*time.Millisecond),
				synthient.WithLogger(logger),
				synthient.WithResponseHook(hook),
			)
			for _, f := range tc.faults {
				srv.Inject(f.route, 1, f.fault)
			}
			mu.Lock()
			seen := len(locations)
			mu.Unlock()

			errs := tc.call(context.Background(), c)
			if len(tc.faults) == 0 && len(errs) > 0 {
				// Not a failure of this test (a loaded machine can time a
				// call out), but worth seeing; the errors are checked as
				// the others.
				t.Logf("the fault-free call failed: %v", errs)
			}

			mu.Lock()
			learned := append([]string(nil), locations[seen:]...)
			mu.Unlock()
			for _, loc := range learned {
				known = append(known, presignedSecrets(t, loc)...)
			}
			for _, err := range errs {
				assertNoSecret(t, err, nil, known...)
			}
			assertNoSecret(t, nil, logs, known...)
			errCount += len(errs)
			allLogs.WriteString(logs.String())
		})
	}

	// The run must have produced the material it checks.
	mu.Lock()
	redirects := len(locations)
	mu.Unlock()
	require.GreaterOrEqual(t, errCount, 25, "errors that came back: the faults did not bite")
	require.GreaterOrEqual(t, redirects, 15, "download redirects the hooks saw")
	log := allLogs.String()
	assert.Contains(t, log, `"route":"/lookup/ip/{ip}"`, "the log holds no LookupIP attempt event")
	assert.Contains(t, log, `"level":"DEBUG"`, "the log holds no event at Debug")
	t.Logf("%d errors, %d presigned URLs, %d log bytes checked", errCount, redirects, len(log))
}

// secretCall is a call of a secret case: it returns the errors it gave.
type secretCall = func(context.Context, *synthient.Client) []error

// secretFault is a fault injected on a route of the fake.
type secretFault struct {
	route string
	fault synthienttest.Fault
}

// secretCase is one case of TestNoSecretInLogsOrErrors.
type secretCase struct {
	name   string
	faults []secretFault // injected in turn before the call
	call   secretCall
}

// secretCases returns the cases of TestNoSecretInLogsOrErrors: every
// operation once without a fault, then faults of every kind on API routes,
// on storage and on streams. Files are downloaded into dir.
func secretCases(dir string) []secretCase {
	const (
		fStatus    = synthienttest.FaultStatus
		fClose     = synthienttest.FaultCloseAfterRequest
		fReset     = synthienttest.FaultResetMidBody
		fSlowHead  = synthienttest.FaultSlowHeaders
		fSlowBody  = synthienttest.FaultSlowBody
		fTruncated = synthienttest.FaultTruncatedBody
		fOversized = synthienttest.FaultOversizedLine
		hourID     = "2026-06-10/13"
		dayID      = "2026-06-09"
	)
	slowHeaders := synthienttest.Fault{Kind: fSlowHead, Delay: time.Second} // beyond the timeout
	slowBody := synthienttest.Fault{Kind: fSlowBody, Size: 16 << 10, Delay: time.Millisecond}
	ip := netip.MustParseAddr("198.51.100.23")
	ips := []netip.Addr{ip, netip.MustParseAddr("2001:db8::7"), netip.MustParseAddr("203.0.113.4")}

	type call = secretCall
	var (
		health = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.Health(ctx)
			return errorList(err)
		}
		account = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.Account(ctx)
			return errorList(err)
		}
		lookupIP = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.LookupIP(ctx, ip)
			return errorList(err)
		}
		lookupIPs = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.LookupIPs(ctx, ips)
			return errorList(err)
		}
		lookupDomain = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.LookupDomain(ctx, "example.org", nil)
			return errorList(err)
		}
		listExports = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.ListExports(ctx, synthient.FeedProxies, nil)
			return errorList(err)
		}
		exportMeta = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, dayID)
			return errorList(err)
		}
		download = func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, hourID, io.Discard)
			return errorList(err)
		}
		downloadFile = func(feed synthient.Feed, id, name string) call {
			return func(ctx context.Context, c *synthient.Client) []error {
				_, err := c.DownloadExportFile(ctx, feed, id, filepath.Join(dir, name), &synthient.DownloadParams{Verify: true})
				return errorList(err)
			}
		}
		allExports = func(feed synthient.Feed, limit int) call {
			return func(ctx context.Context, c *synthient.Client) []error {
				return seqErrors(c.AllExports(ctx, feed, &synthient.ListExportsParams{Limit: limit}), 1000)
			}
		}
	)
	type fault = secretFault
	cases := []secretCase{
		// Every operation once without a fault.
		{"Health/no_fault", nil, health},
		{"Account/no_fault", nil, account},
		{"LookupIP/no_fault", nil, lookupIP},
		{"LookupIPs/no_fault", nil, lookupIPs},
		{"LookupDomain/no_fault", nil, func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.LookupDomain(ctx, "example.com", &synthient.DomainLookupParams{Limit: 5})
			return errorList(err)
		}},
		{"ListExports/no_fault", nil, func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 3})
			return errorList(err)
		}},
		{"AllExports/no_fault", nil, allExports(synthient.FeedAnonymizers, 4)},
		{"ExportMeta/no_fault", nil, func(ctx context.Context, c *synthient.Client) []error {
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, "latest")
			return errorList(err)
		}},
		{"DownloadExport/no_fault", nil, download},
		{"DownloadExportFile/no_fault", nil, downloadFile(synthient.FeedTorrents, dayID, "a.parquet")},
		{"StreamProxies/no_fault", nil, streamErrors((*synthient.Client).StreamProxies, 2)},
		{"StreamAnonymizers/no_fault", nil, streamErrors((*synthient.Client).StreamAnonymizers, 2)},
		{"StreamTorrents/no_fault", nil, streamErrors((*synthient.Client).StreamTorrents, 2)},
		{"StreamJA4T/no_fault", nil, streamErrors((*synthient.Client).StreamJA4T, 2)},
		{"StreamHoneypotHTTP/no_fault", nil, streamErrors((*synthient.Client).StreamHoneypotHTTP, 2)},
		{"StreamHoneypotHTTPS/no_fault", nil, streamErrors((*synthient.Client).StreamHoneypotHTTPS, 2)},
		{"StreamHoneypotDNS/no_fault", nil, streamErrors((*synthient.Client).StreamHoneypotDNS, 2)},
		{"StreamHoneypotADB/no_fault", nil, streamErrors((*synthient.Client).StreamHoneypotADB, 2)},
		{"StreamRaw/no_fault", nil, func(ctx context.Context, c *synthient.Client) []error {
			return seqErrors(c.StreamRaw(ctx, synthient.FeedHoneypotHTTP), 2)
		}},

		// Then faults of every kind, on API routes and on storage.
		{"Health/503", []fault{{synthienttest.RouteHealth, statusFault(503)}}, health},
		{"Account/503_500_502", []fault{
			{synthienttest.RouteAccount, synthienttest.Fault{Kind: fStatus, Status: 503, RetryAfter: "0"}},
			{synthienttest.RouteAccount, statusFault(500)},
			{synthienttest.RouteAccount, statusFault(502)},
		}, account},
		{"Account/truncated", []fault{{synthienttest.RouteAccount, synthienttest.Fault{Kind: fTruncated}}}, account},
		{"Account/undecodable", []fault{{synthienttest.RouteAccount,
			synthienttest.Fault{Kind: fStatus, Status: 200, Body: `{"email":`, ContentType: "application/json"}}}, account},
		{"LookupIP/429_then_success", []fault{{synthienttest.RouteLookupIP,
			synthienttest.Fault{Kind: fStatus, Status: 429, RetryAfter: "0"}}}, lookupIP},
		{"LookupIP/429_without_retry_after", []fault{{synthienttest.RouteLookupIP, statusFault(429)}}, lookupIP},
		{"LookupIP/429_retry_after_over_max", []fault{{synthienttest.RouteLookupIP,
			synthienttest.Fault{Kind: fStatus, Status: 429, RetryAfter: "3600"}}}, lookupIP},
		{"LookupIP/reset", []fault{{synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fReset}}}, lookupIP},
		{"LookupIP/401", []fault{{synthienttest.RouteLookupIP,
			synthienttest.Fault{Kind: fStatus, Status: 401, Body: "invalid key", ContentType: "text/plain"}}}, lookupIP},
		{"LookupIPs/closed", []fault{{synthienttest.RouteLookupIPs, synthienttest.Fault{Kind: fClose}}}, lookupIPs},
		{"LookupIPs/slow_body", []fault{{synthienttest.RouteLookupIPs, slowBody}}, lookupIPs},
		{"LookupDomain/slow_headers", []fault{{synthienttest.RouteLookupDomain, slowHeaders}}, lookupDomain},
		{"LookupDomain/422", []fault{{synthienttest.RouteLookupDomain, statusFault(422)}}, lookupDomain},
		{"ListExports/504_then_slow_body", []fault{
			{synthienttest.RouteExports, statusFault(504)},
			{synthienttest.RouteExports, slowBody},
		}, listExports},
		{"AllExports/404", []fault{{synthienttest.RouteExports, statusFault(404)}}, allExports(synthient.FeedProxies, 2)},
		{"ListExports/oversized", []fault{{synthienttest.RouteExports, synthienttest.Fault{Kind: fOversized, Size: 1 << 20}}}, listExports},
		{"ExportMeta/slow_headers_then_success", []fault{{synthienttest.RouteExportMeta, slowHeaders}}, exportMeta},
		{"ExportMeta/404", []fault{{synthienttest.RouteExportMeta, statusFault(404)}}, exportMeta},
		// Downloads: the API leg and the storage leg.
		{"DownloadExport/api_closed_then_success", []fault{{synthienttest.RouteDownload, synthienttest.Fault{Kind: fClose}}}, download},
		{"DownloadExport/api_503s", []fault{
			{synthienttest.RouteDownload, statusFault(503)},
			{synthienttest.RouteDownload, statusFault(503)},
			{synthienttest.RouteDownload, statusFault(503)},
		}, download},
	}
	for _, f := range []struct {
		name  string
		fault synthienttest.Fault
	}{
		{"403", statusFault(403)},
		{"500", statusFault(500)},
		{"503_retry_after_7", synthienttest.Fault{Kind: fStatus, Status: 503, RetryAfter: "7"}},
		{"429_retry_after_1", synthienttest.Fault{Kind: fStatus, Status: 429, RetryAfter: "1"}},
		{"closed", synthienttest.Fault{Kind: fClose}},
		{"reset", synthienttest.Fault{Kind: fReset}},
		{"reset_after_1000_bytes", synthienttest.Fault{Kind: fReset, Size: 1000}},
		{"truncated", synthienttest.Fault{Kind: fTruncated}},
		{"slow_headers", slowHeaders},
		{"slow_body", slowBody},
		{"oversized", synthienttest.Fault{Kind: fOversized, Size: 1 << 10}},
	} {
		cases = append(cases, secretCase{"DownloadExport/storage_" + f.name, []fault{{synthienttest.RouteStorage, f.fault}}, download})
	}
	for i, f := range []struct {
		name  string
		fault synthienttest.Fault
	}{
		{"500", statusFault(500)},
		{"reset", synthienttest.Fault{Kind: fReset}},
		{"truncated", synthienttest.Fault{Kind: fTruncated}},
		{"slow_headers", slowHeaders},
	} {
		cases = append(cases, secretCase{"DownloadExportFile/storage_" + f.name, []fault{{synthienttest.RouteStorage, f.fault}},
			downloadFile(synthient.FeedProxies, dayID, fmt.Sprintf("f%d.parquet", i))})
	}
	// Streams.
	streamRaw := func(ctx context.Context, c *synthient.Client) []error {
		return seqErrors(c.StreamRaw(ctx, synthient.FeedProxies), 3)
	}
	for _, f := range []struct {
		name  string
		fault synthienttest.Fault
	}{
		{"429", statusFault(429)},
		{"503", statusFault(503)},
		{"closed", synthienttest.Fault{Kind: fClose}},
		{"reset", synthienttest.Fault{Kind: fReset}},
		{"truncated", synthienttest.Fault{Kind: fTruncated}},
		{"slow_headers", slowHeaders},
		{"slow_body", synthienttest.Fault{Kind: fSlowBody, Size: 8, Delay: time.Millisecond}},
		{"oversized_line", synthienttest.Fault{Kind: fOversized, Size: synthient.MaxLineSize + 16}},
	} {
		cases = append(cases, secretCase{"StreamRaw/" + f.name, []fault{{synthienttest.RouteStream, f.fault}}, streamRaw})
	}
	cases = append(cases, secretCase{"StreamHoneypotHTTPS/reset", []fault{{synthienttest.RouteStream, synthienttest.Fault{Kind: fReset}}},
		streamErrors((*synthient.Client).StreamHoneypotHTTPS, 3)})
	return cases
}
