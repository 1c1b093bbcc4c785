package synthient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// TestAPIErrorMessageIsTheStatusAlone checks that Error() is exactly the
// status code and its standard text, or the bare code, with nothing from
// the body, the headers or the URL.
func TestAPIErrorMessageIsTheStatusAlone(t *testing.T) {
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
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			m := newMock("", respond(tc.status, body,
				"Content-Type", "application/problem+json", "X-Request-Id", "SECRET-request-id"))
			c := m.client(t)
			_, err := c.LookupIP(context.Background(), testIP)
			ae := apiErrorOf(t, err)
			if ae.Status != tc.status {
				t.Fatalf("Status = %d, want %d", ae.Status, tc.status)
			}
			for _, f := range []string{"%s", "%v", "%+v"} {
				if got := fmt.Sprintf(f, ae); got != tc.want {
					t.Errorf("Sprintf(%q, APIError) = %q, want %q", f, got, tc.want)
				}
			}
			if ae.Title != "SECRET-title" || ae.Detail != "SECRET-detail" {
				t.Errorf("the body was not parsed: Title %q, Detail %q", ae.Title, ae.Detail)
			}
			for _, f := range []string{"%s", "%v", "%+v"} {
				if got := fmt.Sprintf(f, err); strings.Contains(got, "SECRET") || strings.Contains(got, "api.test") ||
					strings.Contains(got, testKey) {
					t.Errorf("Sprintf(%q, err) = %q holds server text, the URL or the key", f, got)
				}
			}
			// A value built by hand says the same.
			if got := (&synthient.APIError{Status: tc.status, Title: "x", Detail: "y"}).Error(); got != tc.want {
				t.Errorf("(&APIError{Status: %d}).Error() = %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}

// TestAPIErrorRequestID checks that RequestID is the X-Request-Id header,
// else the problem's instance.
func TestAPIErrorRequestID(t *testing.T) {
	problem := `{"title":"Not Found","status":404,"instance":"/api/v4/lookup/ip/1.2.3.4#req-from-instance"}`
	cases := []struct {
		name  string
		reply reply
		want  string
	}{
		{"header_wins", respond(404, problem, "Content-Type", "application/problem+json", "X-Request-Id", "req-from-header"),
			"req-from-header"},
		{"instance_without_header", respond(404, problem, "Content-Type", "application/problem+json"),
			"/api/v4/lookup/ip/1.2.3.4#req-from-instance"},
		{"header_without_instance", respond(404, `{"title":"Not Found"}`, "Content-Type", "application/problem+json", "X-Request-Id", "req-only-header"),
			"req-only-header"},
		{"neither", respond(404, `{"title":"Not Found"}`, "Content-Type", "application/problem+json"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMock("", tc.reply)
			_, err := m.client(t).LookupIP(context.Background(), testIP)
			if got := apiErrorOf(t, err).RequestID; got != tc.want {
				t.Errorf("RequestID = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAPIErrorProblemDetails checks that the members of a problem details
// body land in the APIError, whatever JSON media type carries them.
func TestAPIErrorProblemDetails(t *testing.T) {
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
			m := newMock("", respond(422, validation, "Content-Type", ct))
			_, err := m.client(t).LookupIPs(context.Background(), []netip.Addr{testIP})
			ae := apiErrorOf(t, err)
			if ae.Status != 422 || ae.Type != "https://docs.synthient.com/errors/validation" ||
				ae.Title != "Validation error" || ae.Detail != "2 fields are invalid" ||
				ae.RequestID != "/api/v4/lookup/ips" {
				t.Errorf("APIError = %+v", *ae)
			}
			if !reflect.DeepEqual(ae.Errors, wantErrors) {
				t.Errorf("Errors = %v, want %v", ae.Errors, wantErrors)
			}
			if ae.RetryAfter != nil {
				t.Errorf("RetryAfter = %v, want nil", *ae.RetryAfter)
			}
			if got := m.count(); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}
	t.Run("errors_as_map_of_strings", func(t *testing.T) {
		m := newMock("", respond(422, `{"title":"Validation error","errors":{"ip_address":"must be a valid IP address"}}`,
			"Content-Type", "application/problem+json"))
		_, err := m.client(t).LookupIP(context.Background(), testIP)
		want := map[string][]string{"ip_address": {"must be a valid IP address"}}
		if got := apiErrorOf(t, err).Errors; !reflect.DeepEqual(got, want) {
			t.Errorf("Errors = %v, want %v", got, want)
		}
	})
	t.Run("no_errors_member", func(t *testing.T) {
		m := newMock("", problemReply(403))
		_, err := m.client(t).LookupIP(context.Background(), testIP)
		if got := apiErrorOf(t, err).Errors; len(got) != 0 {
			t.Errorf("Errors = %v, want none", got)
		}
	})
}

// TestAPIErrorTextPlainBody checks that a text/plain error body (the
// edge's 401 for a malformed key) becomes Detail.
func TestAPIErrorTextPlainBody(t *testing.T) {
	m := newMock("", respond(401, "Invalid API Key\n", "Content-Type", "text/plain; charset=utf-8"))
	_, err := m.client(t).Account(context.Background())
	ae := apiErrorOf(t, err)
	if ae.Status != 401 || strings.TrimSpace(ae.Detail) != "Invalid API Key" || ae.Title != "" || ae.Type != "" {
		t.Errorf("APIError = %+v, want Status 401 and Detail %q", *ae, "Invalid API Key")
	}
	if got := ae.Error(); got != "401 Unauthorized" {
		t.Errorf("Error() = %q", got)
	}
	if got := m.count(); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

// TestAPIErrorFromABodyThatDoesNotParse checks that an error status gives an
// *APIError with its Status whatever its body.
func TestAPIErrorFromABodyThatDoesNotParse(t *testing.T) {
	cases := []struct {
		name  string
		reply reply
	}{
		{"problem_json_truncated", respond(400, `{"type":"https://x","title":"Bad`, "Content-Type", "application/problem+json")},
		{"problem_json_not_an_object", respond(400, `["a","b"]`, "Content-Type", "application/problem+json")},
		{"empty_problem_json", respond(400, "", "Content-Type", "application/problem+json")},
		{"empty_no_content_type", respond(400, "")},
		{"html", respond(400, "<html><body><h1>400 Bad Request</h1></body></html>", "Content-Type", "text/html")},
		{"binary", respond(400, "\x00\xff\xfe{", "Content-Type", "application/octet-stream")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMock("", tc.reply)
			_, err := m.client(t).LookupIP(context.Background(), testIP)
			ae := apiErrorOf(t, err)
			if ae.Status != 400 || ae.Error() != "400 Bad Request" {
				t.Errorf("Status %d, Error() %q; want 400, %q", ae.Status, ae.Error(), "400 Bad Request")
			}
			if ae.Type != "" || ae.Title != "" || len(ae.Errors) != 0 {
				t.Errorf("members from a body that does not parse: %+v", *ae)
			}
			if tc.reply.body == "" && ae.Detail != "" {
				t.Errorf("Detail = %q from an empty body", ae.Detail)
			}
		})
	}
}

// TestAPIErrorBodyIsReadUpTo64KiB checks that no more than 64 KiB of an
// error body ends up in the APIError.
func TestAPIErrorBodyIsReadUpTo64KiB(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	m := newMock("", respond(401, big, "Content-Type", "text/plain"))
	_, err := m.client(t).Account(context.Background())
	ae := apiErrorOf(t, err)
	if len(ae.Detail) == 0 || len(ae.Detail) > 64<<10 {
		t.Errorf("len(Detail) = %d, want 1 to %d", len(ae.Detail), 64<<10)
	}
}

// TestEveryTypedErrorReachesTheBaseError checks errors.As(err, new(*Error))
// on each typed error, with Op, Attempts and StopReason.
func TestEveryTypedErrorReachesTheBaseError(t *testing.T) {
	cases := []struct {
		name     string
		op       string
		script   []reply
		check    func(t *testing.T, err error)
		attempts int
		reason   synthient.StopReason
	}{
		{"APIError", "LookupIP", []reply{problemReply(402)}, func(t *testing.T, err error) {
			if apiErrorOf(t, err).Status != 402 {
				t.Errorf("Status is not 402")
			}
		}, 1, retry.NotRetryable},
		{"APIError_after_retries", "Account", []reply{problemReply(503)}, func(t *testing.T, err error) {
			if apiErrorOf(t, err).Status != 503 {
				t.Errorf("Status is not 503")
			}
		}, 3, retry.AttemptsExhausted},
		{"ConnectionError", "LookupDomain", []reply{failWith(errors.New("connection reset by peer"))}, func(t *testing.T, err error) {
			var ce *synthient.ConnectionError
			if !errors.As(err, &ce) || ce.NotSent {
				t.Errorf("want a *ConnectionError with NotSent false, got %T %v", err, err)
			}
		}, 1, retry.MayHaveBeenProcessed},
		{"ConnectionError_not_sent", "Account", []reply{failWith(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})},
			func(t *testing.T, err error) {
				var ce *synthient.ConnectionError
				if !errors.As(err, &ce) || !ce.NotSent {
					t.Errorf("want a *ConnectionError with NotSent true, got %T %v", err, err)
				}
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("the cause is not reachable with errors.Is")
				}
			}, 3, retry.AttemptsExhausted},
		{"TimeoutError", "LookupIPs", []reply{failWith(timeoutError{})}, func(t *testing.T, err error) {
			var te *synthient.TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("errors.As(err, *TimeoutError) = false for %T %v", err, err)
			}
			if !te.Timeout() {
				t.Errorf("Timeout() = false")
			}
			var ce *synthient.ConnectionError
			if !errors.As(err, &ce) {
				t.Errorf("errors.As(*TimeoutError, *ConnectionError) = false")
			} else if ce.NotSent {
				t.Errorf("ConnectionError.NotSent = true for a timeout after the request left")
			}
		}, 1, retry.MayHaveBeenProcessed},
		{"DecodeError", "Account", []reply{jsonReply(200, `{"email":`)}, func(t *testing.T, err error) {
			var de *synthient.DecodeError
			if !errors.As(err, &de) || de.Status != 200 {
				t.Errorf("want a *DecodeError with Status 200, got %T %v", err, err)
			}
		}, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				op := opNamed(tc.op)
				m := newMock(op.success, tc.script...)
				err := op.call(context.Background(), m.client(t))
				if err == nil {
					t.Fatal("err = nil")
				}
				tc.check(t, err)
				base := baseOf(t, err)
				if base.Op != tc.op || base.Attempts != tc.attempts {
					t.Errorf("base: Op %q, Attempts %d; want %q, %d", base.Op, base.Attempts, tc.op, tc.attempts)
				}
				if tc.reason != "" && base.StopReason != tc.reason {
					t.Errorf("base: StopReason %q, want %q", base.StopReason, tc.reason)
				}
			})
		})
	}
}

// TestDecodeErrorIsNeverRetried checks that a 2xx body that does not
// match the schema gives a *DecodeError after one request, for every
// operation (Account included, although it retries 5xx).
func TestDecodeErrorIsNeverRetried(t *testing.T) {
	wrongTypes := map[string]string{
		"LookupIP":     `{"ip":12,"network":"none"}`,
		"LookupIPs":    `{"results":{"ip":"1.2.3.4"}}`,
		"LookupDomain": `{"domain":7,"stats":[]}`,
		"Health":       `{"status":true}`,
		"Account":      `{"email":5,"scopes":"BASIC"}`,
	}
	for _, op := range operations() {
		bodies := []struct{ name, body string }{
			{"invalid_json", `{"ip": "1.2.3.4",`},
			{"empty_body", ""},
			{"wrong_types", wrongTypes[op.name]},
			{"json_array", `[]`},
			{"json_null", `null`},
			{"empty_object", `{}`},
		}
		for _, b := range bodies {
			t.Run(op.name+"/"+b.name, func(t *testing.T) {
				m := newMock(op.success, jsonReply(200, b.body), succeed)
				err := op.call(context.Background(), m.client(t))
				var de *synthient.DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("err = %T %v, want a *DecodeError", err, err)
				}
				if de.Status != 200 {
					t.Errorf("DecodeError.Status = %d, want 200", de.Status)
				}
				if got := m.count(); got != 1 {
					t.Errorf("%d requests, want 1: a decoding failure is never retried", got)
				}
				if base := baseOf(t, err); base.Op != op.name || base.Attempts != 1 {
					t.Errorf("base: Op %q, Attempts %d; want %q, 1", base.Op, base.Attempts, op.name)
				}
			})
		}
	}
}

// TestErrClosed checks that after Close every method fails with an error
// matching ErrClosed and sends nothing.
func TestErrClosed(t *testing.T) {
	m := newMock("")
	c := m.client(t)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, op := range operations() {
		err := op.call(context.Background(), c)
		if !errors.Is(err, synthient.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want one matching ErrClosed", op.name, err)
		}
		if errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("%s after Close: err matches ErrInvalidArgument", op.name)
		}
	}
	if got := m.count(); got != 0 {
		t.Errorf("%d requests were sent after Close, want 0", got)
	}
}

// TestKeyNeverInErrorsOrLogs runs a call into each kind of failure with a
// Debug logger and checks that neither the errors in every format nor the
// log holds the API key, and that the log holds no query.
func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		scripts := [][]reply{
			{problemReply(429)},
			{problemReply(429, "Retry-After", "61")},
			{problemReply(503)},
			{respond(401, "Invalid API Key", "Content-Type", "text/plain")},
			{failWith(errors.New("connection reset by peer"))},
			{failWith(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})},
			{failWith(timeoutError{})},
			{jsonReply(200, `{"ip":`)},
			{problemReply(429, "Retry-After", "1"), succeed},
			{succeed},
		}
		var errs []error
		for _, script := range scripts {
			for _, op := range operations() {
				m := newMock(op.success, script...)
				c := m.client(t, synthient.WithLogger(logger))
				if err := op.call(context.Background(), c); err != nil {
					errs = append(errs, err)
				}
			}
		}
		// A call cancelled during a wait, one with a deadline too short for
		// the wait, the closed client, and LookupDomain with a query.
		m := newMock(opNamed("Account").success, problemReply(429, "Retry-After", "30"))
		c := m.client(t, synthient.WithLogger(logger))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second); cancel() }()
		_, err := c.Account(ctx)
		errs = append(errs, err)
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		_, err = c.Account(ctx)
		cancel()
		errs = append(errs, err)
		_, err = c.LookupDomain(context.Background(), "example.org", &synthient.DomainLookupParams{Limit: 7})
		errs = append(errs, err)
		_, err = c.LookupIP(context.Background(), netip.Addr{})
		errs = append(errs, err)
		c.Close()
		_, err = c.Account(context.Background())
		errs = append(errs, err)

		if len(errs) < 40 {
			t.Fatalf("only %d errors were produced", len(errs))
		}
		for _, err := range errs {
			if err == nil {
				continue
			}
			for _, f := range []string{"%s", "%v", "%+v", "%#v"} {
				if s := fmt.Sprintf(f, err); strings.Contains(s, testKey) {
					t.Errorf("Sprintf(%q, %T) holds the API key: %s", f, err, s)
				}
			}
		}
		out := logs.String()
		if strings.Count(out, "\n") < 40 {
			t.Fatalf("only %d log lines", strings.Count(out, "\n"))
		}
		if strings.Contains(out, testKey) {
			t.Errorf("the log holds the API key:\n%s", out)
		}
		if strings.Contains(out, "limit=") || strings.Contains(out, "?") {
			t.Errorf("the log holds a query:\n%s", out)
		}
	})
}

// The *Error that errors.As builds over a typed error names the operation
// once: a *ConnectionError's text already starts with it, an *APIError's
// does not.
func TestBaseErrorOfATypedErrorNamesTheOperationOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		serve func(*rawConn)
	}{
		{"APIError", func(c *rawConn) { _ = c.WriteResponse(404, "text/plain", "no such thing") }},
		{"ConnectionError", func(*rawConn) {}}, // closed without an answer
		{"DecodeError", func(c *rawConn) { _ = c.WriteResponse(200, "application/json", "[") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, func(c *rawConn) {
				if _, _, _, err := c.ReadRequest(); err == nil {
					tc.serve(c)
				}
			})
			c := newClient(t, srv.URL, synthient.WithMaxRetries(0))
			_, err := c.Account(context.Background())
			var base *synthient.Error
			if !errors.As(err, &base) {
				t.Fatalf("err = %v (%T), want one reaching *Error", err, err)
			}
			if got := strings.Count(base.Error(), "Account"); got != 1 {
				t.Errorf("base error %q names the operation %d times, want once", base, got)
			}
		})
	}
}
