package synthient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/synthient-go/synthient"
)

// newClientNoPanic calls NewClient and turns a panic into a test error.
func newClientNoPanic(t *testing.T, key string, opts ...synthient.Option) (c *synthient.Client, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("NewClient panicked: %v", r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return synthient.NewClient(key, opts...)
}

func TestNewClientRejectsInvalidKeysAndOptions(t *testing.T) {
	cases := []struct {
		name string
		key  string
		opts []synthient.Option
	}{
		{"empty_key", "", nil},
		{"key_with_leading_space", " " + testKey, nil},
		{"key_with_trailing_space", testKey + " ", nil},
		{"key_with_inner_space", "test-key 6f1d2c3b-secret", nil},
		{"key_with_tab", testKey + "\t", nil},
		{"key_with_newline", testKey + "\n", nil},
		{"key_with_crlf_injection", testKey + "\r\nX-Evil: 1", nil},
		{"key_with_nul", testKey + "\x00", nil},
		{"key_with_del", testKey + "\x7f", nil},
		{"key_not_ascii", testKey + "é", nil},
		{"base_url_empty", testKey, []synthient.Option{synthient.WithBaseURL("")}},
		{"base_url_ftp", testKey, []synthient.Option{synthient.WithBaseURL("ftp://x")}},
		{"base_url_relative", testKey, []synthient.Option{synthient.WithBaseURL("/relative")}},
		{"base_url_no_scheme", testKey, []synthient.Option{synthient.WithBaseURL("api.synthient.com/api/v4")}},
		{"base_url_no_host", testKey, []synthient.Option{synthient.WithBaseURL("http://")}},
		{"base_url_port_only", testKey, []synthient.Option{synthient.WithBaseURL("http://:8080/api/v4")}},
		{"base_url_user_info", testKey, []synthient.Option{synthient.WithBaseURL("http://user:pw@host/api/v4")}},
		{"base_url_query", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4?x=1")}},
		{"base_url_empty_query", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4?")}},
		{"base_url_fragment", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4#frag")}},
		{"base_url_does_not_parse", testKey, []synthient.Option{synthient.WithBaseURL("http://host:port/api")}},
		{"timeout_0", testKey, []synthient.Option{synthient.WithTimeout(0)}},
		{"timeout_negative", testKey, []synthient.Option{synthient.WithTimeout(-time.Second)}},
		{"open_timeout_0", testKey, []synthient.Option{synthient.WithOpenTimeout(0)}},
		{"open_timeout_negative", testKey, []synthient.Option{synthient.WithOpenTimeout(-1)}},
		{"max_retry_after_0", testKey, []synthient.Option{synthient.WithMaxRetryAfter(0)}},
		{"max_retry_after_negative", testKey, []synthient.Option{synthient.WithMaxRetryAfter(-time.Minute)}},
		{"retry_budget_0", testKey, []synthient.Option{synthient.WithRetryBudget(0)}},
		{"retry_budget_negative", testKey, []synthient.Option{synthient.WithRetryBudget(-time.Second)}},
		{"backoff_base_0", testKey, []synthient.Option{synthient.WithBackoff(0, time.Second)}},
		{"backoff_base_negative", testKey, []synthient.Option{synthient.WithBackoff(-time.Second, time.Second)}},
		{"backoff_max_below_base", testKey, []synthient.Option{synthient.WithBackoff(2*time.Second, time.Second)}},
		{"max_retries_negative", testKey, []synthient.Option{synthient.WithMaxRetries(-1)}},
		{"transport_nil", testKey, []synthient.Option{synthient.WithTransport(nil)}},
		{"random_nil", testKey, []synthient.Option{synthient.WithRandom(nil)}},
		{"tls_config_nil", testKey, []synthient.Option{synthient.WithTLSConfig(nil)}},
		{"user_agent_newline", testKey, []synthient.Option{synthient.WithUserAgent("\n")}},
		{"user_agent_trailing_newline", testKey, []synthient.Option{synthient.WithUserAgent("my-app/1.0\n")}},
		{"user_agent_inner_newline", testKey, []synthient.Option{synthient.WithUserAgent("my-app\n1.0")}},
		{"user_agent_header_injection", testKey, []synthient.Option{synthient.WithUserAgent("my-app\r\nX-Evil: 1")}},
		{"user_agent_nul", testKey, []synthient.Option{synthient.WithUserAgent("my-app\x00")}},
		{"user_agent_not_ascii", testKey, []synthient.Option{synthient.WithUserAgent("mein-prüfer/1.0")}},
		{"one_bad_option_among_good_ones", testKey, []synthient.Option{
			synthient.WithBaseURL("https://api.test/api/v4"), synthient.WithTimeout(time.Second),
			synthient.WithOpenTimeout(0), synthient.WithMaxRetries(3)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newClientNoPanic(t, tc.key, tc.opts...)
			if !errors.Is(err, synthient.ErrInvalidArgument) {
				t.Errorf("err = %v, want one matching ErrInvalidArgument", err)
			}
			if c != nil {
				t.Errorf("NewClient returned a client, want nil")
				c.Close()
			}
			if err != nil {
				for _, f := range []string{"%s", "%v", "%+v", "%#v"} {
					if s := fmt.Sprintf(f, err); strings.Contains(s, testKey) || strings.Contains(s, "6f1d2c3b") {
						t.Errorf("Sprintf(%q, err) holds the key: %s", f, s)
					}
				}
			}
		})
	}
}

// TestNewClientAcceptsValidOptions is the counterpart of the rejections
// above: the valid neighbours of each rejected value are accepted.
func TestNewClientAcceptsValidOptions(t *testing.T) {
	cases := []struct {
		name string
		opts []synthient.Option
	}{
		{"defaults", nil},
		{"nil_option_is_skipped", []synthient.Option{nil}},
		{"https_base_url", []synthient.Option{synthient.WithBaseURL("https://api.synthient.com/api/v4")}},
		{"http_base_url_with_port", []synthient.Option{synthient.WithBaseURL("http://127.0.0.1:8080/api/v4")}},
		{"base_url_trailing_slash", []synthient.Option{synthient.WithBaseURL("http://[::1]:8080/api/v4/")}},
		{"timeouts", []synthient.Option{synthient.WithTimeout(time.Nanosecond), synthient.WithOpenTimeout(time.Nanosecond)}},
		{"max_retry_after", []synthient.Option{synthient.WithMaxRetryAfter(time.Nanosecond)}},
		{"retry_budget", []synthient.Option{synthient.WithRetryBudget(time.Nanosecond)}},
		{"backoff_base_equals_max", []synthient.Option{synthient.WithBackoff(time.Second, time.Second)}},
		{"max_retries", []synthient.Option{synthient.WithMaxRetries(0), synthient.WithMaxRetries(16)}},
		{"transport", []synthient.Option{synthient.WithTransport(http.DefaultTransport)}},
		{"random", []synthient.Option{synthient.WithRandom(func() float64 { return 0.5 })}},
		{"user_agent", []synthient.Option{synthient.WithUserAgent("my-app/1.0 (+https://example.com)")}},
		{"nil_logger_and_hook", []synthient.Option{synthient.WithLogger(nil), synthient.WithResponseHook(nil)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newClientNoPanic(t, testKey, tc.opts...)
			if err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			if c == nil {
				t.Fatal("nil client")
			}
			c.Close()
		})
	}
}

func TestUserAgentAndBaseURLReachTheRequest(t *testing.T) {
	m := newMock(opNamed("Account").success)
	c := newClient(t, mockBase+"/", synthient.WithTransport(m.mt), synthient.WithUserAgent("my-app/1.0"))
	if _, err := c.Account(context.Background()); err != nil {
		t.Fatalf("Account: %v", err)
	}
	a := checkOneRequest(t, m, http.MethodGet, "/api/v4/account/me")
	if a.url.Host != "api.test" || a.url.Scheme != "https" {
		t.Errorf("request went to %s://%s", a.url.Scheme, a.url.Host)
	}
	ua := a.header.Get("User-Agent")
	if !strings.HasPrefix(ua, "synthient-go/") || !strings.HasSuffix(ua, " my-app/1.0") {
		t.Errorf("User-Agent = %q, want synthient-go/<version> my-app/1.0", ua)
	}
}

// TestConcurrentCalls shares one client among 50 goroutines (run with
// -race) against a loopback server.
func TestConcurrentCalls(t *testing.T) {
	var lookups, accounts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != testKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v4/lookup/ip/"):
			lookups.Add(1)
			fmt.Fprintf(w, `{"ip":%q}`, strings.TrimPrefix(r.URL.Path, "/api/v4/lookup/ip/"))
		case r.URL.Path == "/api/v4/account/me":
			accounts.Add(1)
			fmt.Fprint(w, accountExample)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/api/v4")

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				if (i+j)%2 == 0 {
					ip := netip.AddrFrom4([4]byte{10, 0, byte(i), byte(j)})
					r, err := c.LookupIP(context.Background(), ip)
					if err != nil {
						errs <- fmt.Errorf("LookupIP(%v): %w", ip, err)
						return
					}
					if r.IP != ip {
						errs <- fmt.Errorf("LookupIP(%v) answered for %v", ip, r.IP)
						return
					}
				} else {
					a, err := c.Account(context.Background())
					if err != nil {
						errs <- fmt.Errorf("Account: %w", err)
						return
					}
					if a.Email != "grace@example.com" {
						errs <- fmt.Errorf("Account: email %q", a.Email)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := lookups.Load() + accounts.Load(); got != 4*n {
		t.Errorf("the server saw %d requests, want %d", got, 4*n)
	}
}


// expectFields checks the members of e given in want (a nil value: the
// member must be absent).
func expectFields(t *testing.T, i int, e logEvent, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := e[k]
		switch {
		case v == nil && ok:
			t.Errorf("event %d: %s = %v, want it absent", i, k, got)
		case v != nil && !ok:
			t.Errorf("event %d: no %s (want %v) in %v", i, k, v, e)
		case v != nil && fmt.Sprint(got) != fmt.Sprint(v):
			t.Errorf("event %d: %s = %v, want %v", i, k, got, v)
		}
	}
}

func TestLoggerRetriesThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		op := opNamed("Account")
		m := newMock(op.success, problemReply(503, "X-Request-Id", "req-1"), problemReply(503), succeed)
		c := m.client(t, synthient.WithLogger(logger))
		if _, err := c.Account(context.Background()); err != nil {
			t.Fatalf("Account: %v", err)
		}
		events := parseLog(t, logs.String())
		if len(events) != 3 {
			t.Fatalf("%d events, want 3:\n%s", len(events), logs.String())
		}
		common := map[string]any{"method": "GET", "route": "/account/me", "class": "standard", "max_attempts": 3,
			"reason": nil, "retry_after": nil}
		for i, e := range events {
			expectFields(t, i, e, common)
			expectFields(t, i, e, map[string]any{"attempt": i + 1})
		}
		for i := range 2 {
			expectFields(t, i, events[i], map[string]any{"level": "DEBUG", "decision": "retry", "status": 503})
			if w, ok := events[i]["wait"].(float64); !ok || w <= 0 {
				t.Errorf("event %d: wait = %v, want a positive duration", i, events[i]["wait"])
			}
		}
		expectFields(t, 0, events[0], map[string]any{"request_id": "req-1"})
		expectFields(t, 2, events[2], map[string]any{"level": "DEBUG", "decision": "done", "status": 200, "wait": nil})
	})
}

func TestLoggerStopAtInfo(t *testing.T) {
	cases := []struct {
		name   string
		op     string
		script []reply
		want   []map[string]any
	}{
		{"billed_503", "LookupIP", []reply{problemReply(503)}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "may_have_been_processed", "status": 503,
				"method": "GET", "route": "/lookup/ip/{ip}", "class": "billed", "attempt": 1, "max_attempts": 3},
		}},
		{"standard_503_exhausted", "Account", []reply{problemReply(503)}, []map[string]any{
			{"level": "DEBUG", "decision": "retry", "attempt": 1},
			{"level": "DEBUG", "decision": "retry", "attempt": 2},
			{"level": "INFO", "decision": "stop", "reason": "attempts_exhausted", "status": 503, "attempt": 3, "max_attempts": 3},
		}},
		{"429_without_retry_after", "LookupIPs", []reply{problemReply(429)}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "rate_limited_without_retry_after", "status": 429,
				"method": "POST", "route": "/lookup/ips", "retry_after": nil},
		}},
		{"429_retry_after_61", "Health", []reply{problemReply(429, "Retry-After", "61")}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "retry_after_exceeds_max", "status": 429,
				"route": "/health", "class": "billed", "retry_after": float64(61 * time.Second)},
		}},
		{"429_retry_after_1_then_200", "LookupDomain", []reply{problemReply(429, "Retry-After", "1"), succeed}, []map[string]any{
			{"level": "DEBUG", "decision": "retry", "status": 429, "route": "/lookup/domain/{domain}",
				"retry_after": float64(time.Second), "wait": float64(time.Second)},
			{"level": "DEBUG", "decision": "done", "status": 200, "retry_after": nil, "reason": nil},
		}},
		{"dial_error", "LookupIP", []reply{failWith(dialRefused())}, []map[string]any{
			{"level": "INFO", "decision": "stop", "reason": "not_retryable", "status": nil, "error": "dial"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logger, logs := newLogger()
				op := opNamed(tc.op)
				m := newMock(op.success, tc.script...)
				c := m.client(t, synthient.WithLogger(logger))
				_ = op.call(context.Background(), c)
				events := parseLog(t, logs.String())
				if len(events) != len(tc.want) {
					t.Fatalf("%d events, want %d:\n%s", len(events), len(tc.want), logs.String())
				}
				for i, w := range tc.want {
					expectFields(t, i, events[i], w)
				}
			})
		})
	}
}

// TestLoggerTimeLeft: with a deadline, each decision logs the time left
// before it; without one, none.
func TestLoggerTimeLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		op := opNamed("Account")
		m := newMock(op.success, problemReply(503), succeed)
		c := m.client(t, synthient.WithLogger(logger))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Account(ctx); err != nil {
			t.Fatalf("Account: %v", err)
		}
		if _, err := c.Account(context.Background()); err != nil {
			t.Fatalf("Account: %v", err)
		}
		events := parseLog(t, logs.String())
		if len(events) != 3 {
			t.Fatalf("%d events, want 3:\n%s", len(events), logs.String())
		}
		for i, e := range events[:2] {
			if left, ok := e["time_left"].(float64); !ok || left <= 0 || left > float64(10*time.Second) {
				t.Errorf("event %d: time_left = %v, want a duration in (0, 10s]", i, e["time_left"])
			}
		}
		expectFields(t, 2, events[2], map[string]any{"decision": "done", "time_left": nil})
	})
}

// TestLoggerHoldsNoAddressKeyOrQuery checks that the route is logged as a
// template, and that neither the address, the domain, the query nor the key
// appears.
func TestLoggerHoldsNoAddressKeyOrQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := newLogger()
		m := newMock(`{"ip":"198.51.100.23"}`, problemReply(429, "Retry-After", "0"), succeed)
		c := m.client(t, synthient.WithLogger(logger))
		if _, err := c.LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23")); err != nil {
			t.Fatalf("LookupIP: %v", err)
		}
		m2 := newMock(`{"domain":"secret-target.example"}`, problemReply(429, "Retry-After", "0"), succeed)
		c2 := m2.client(t, synthient.WithLogger(logger))
		if _, err := c2.LookupDomain(context.Background(), "secret-target.example", &synthient.DomainLookupParams{Limit: 9}); err != nil {
			t.Fatalf("LookupDomain: %v", err)
		}
		out := logs.String()
		events := parseLog(t, out)
		if len(events) != 4 {
			t.Fatalf("%d events, want 4:\n%s", len(events), out)
		}
		if events[0]["route"] != "/lookup/ip/{ip}" || events[2]["route"] != "/lookup/domain/{domain}" {
			t.Errorf("routes %v and %v, want the templates", events[0]["route"], events[2]["route"])
		}
		for _, s := range []string{"198.51.100.23", "secret-target", "limit", "?", testKey, "api.test"} {
			if strings.Contains(out, s) {
				t.Errorf("the log holds %q:\n%s", s, out)
			}
		}
	})
}

// No fmt verb and no slog handler prints the client's API key: a client
// ends up in a log line or a panic message more often than one thinks.
func TestClientFormattingHidesTheKey(t *testing.T) {
	t.Parallel()
	const base = "https://api.example.test/api/v4"
	c := newClient(t, base)
	var nilClient *synthient.Client
	holder := struct{ C *synthient.Client }{c}
	// fmt cannot call Format on an unexported field, and prints a value of
	// a bad verb (%s of a pointer inside a struct) field by field.
	hidden := struct{ c *synthient.Client }{c}

	renderings := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.3v"} {
		renderings[verb] = fmt.Sprintf(verb, c)
		renderings[verb+" of nil"] = fmt.Sprintf(verb, nilClient)
		renderings[verb+" of a struct holding it"] = fmt.Sprintf(verb, holder)
		renderings[verb+" of an unexported field"] = fmt.Sprintf(verb, hidden)
	}
	for _, verb := range []string{"%t", "%e", "%U", "%d"} {
		renderings[verb+" of an unexported field"] = fmt.Sprintf(verb, hidden)
	}
	renderings["reflection"] = fmt.Sprintf("%v %+v", reflect.ValueOf(c).Elem(), reflect.ValueOf(hidden))
	renderings["fmt.Sprint"] = fmt.Sprint(c)
	renderings["fmt.Sprintln"] = fmt.Sprintln(c)
	for name, h := range map[string]func(io.Writer) slog.Handler{
		"slog text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		"slog json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
	} {
		var buf bytes.Buffer
		slog.New(h(&buf)).Info("calling", "client", c, slog.Any("client_any", c))
		renderings[name] = buf.String()
	}

	for name, out := range renderings {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(out, testKey) {
				t.Fatalf("%s prints the API key: %s", name, out)
			}
		})
	}
	for _, name := range []string{"%v", "%+v", "%#v", "%s", "slog text", "slog json"} {
		if !strings.Contains(renderings[name], base) {
			t.Errorf("%s = %q, want it to name the base URL %s", name, renderings[name], base)
		}
	}
}
