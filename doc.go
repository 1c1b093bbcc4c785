// Package synthient is a client for the Synthient API v4: IP and domain
// intelligence, account details, real-time NDJSON feeds and bulk Parquet
// exports.
//
// Create one Client and share it; it is safe for concurrent use:
//
//	c, err := synthient.NewClient(os.Getenv("SYNTHIENT_API_KEY"))
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	r, err := c.LookupIP(ctx, netip.MustParseAddr("8.8.8.8"))
//
// Close ends a client: later calls fail with ErrClosed, streams open end
// at once, and other calls in progress run to their end (a billed lookup
// answered after Close returns its result); see Client.Close.
//
// The package reads no environment variables; the caller passes the key.
// Every method takes a context first: its deadline and cancellation bound
// the whole call, retries and waits included. The client itself sets no
// overall deadline, because streams and downloads are long-lived;
// WithTimeout bounds each wait for a read or a write and WithOpenTimeout
// each connect.
//
// # Errors
//
// Invalid arguments are rejected before anything is sent, with an error
// matching ErrInvalidArgument; calls on a closed client fail with an error
// matching ErrClosed. Every failure of a request is one of these types,
// reachable with a single errors.As:
//
//   - *APIError: the API or the export storage host answered with an error
//     status. Error() is only the status ("429 Too Many Requests"), safe to
//     log; Type, Title, Detail, Errors (per field, for a 422), RequestID and
//     RetryAfter carry the rest.
//   - *ConnectionError: the request could not be sent or its response not
//     read. NotSent tells a confirmed failure (every attempt of the call
//     failed in DNS, dial or TLS handshake: nothing left) from an unknown
//     outcome (some attempt was written or answered, and the server may
//     have acted on it). Err is the last attempt's cause.
//   - *TimeoutError: a connect, read or write wait ran out; it is also a
//     *ConnectionError.
//   - *DecodeError: a 2xx body did not match the API's schema.
//   - *Error: the base of all of them. errors.As(err, new(*Error)) holds for
//     every failure of a request and gives the operation, the number of
//     requests sent (Attempts) and why the client stopped (StopReason). It
//     is returned itself for a cancelled call (then errors.Is(err,
//     ctx.Err()) holds and errors.As still reaches the last *APIError), a
//     repeated export cursor and a redirect the client cannot follow.
//
// An error returned by a response hook (WithResponseHook) is returned
// unchanged. No error, and no log line, ever holds the API key or the query
// of a presigned storage URL.
//
// # Retries
//
// Each operation belongs to a retry class, so that a retry never charges
// twice and never hammers the API:
//
//   - billed (LookupIP, LookupIPs, LookupDomain, and Health, which reports a
//     failure at once): only a 429 with a usable Retry-After is sent again;
//     the rate limiter turned it away before any work was done. A 5xx or a
//     network failure is returned at once, because the API may have done
//     the work (StopReason retry.MayHaveBeenProcessed).
//   - standard (Account, export listings and meta, the API leg of a
//     download, opening a stream): also 500, 502, 503 and 504, and a network
//     failure or timeout before any response, except a TLS error.
//   - never: the storage leg of a download, and anything after a 2xx
//     response's headers arrived.
//
// A 429 without a usable Retry-After (the monthly budget is spent, or too
// many streams are open) is returned at once. The wait before retry k is
// drawn from [0.75*b, b] with b = min(1s*2^k, 30s), and never shorter than
// the Retry-After; a Retry-After over 60 s (WithMaxRetryAfter) is returned
// at once with APIError.RetryAfter set. Before each wait the client checks
// the context's deadline and stops rather than shorten the server's wait.
// WithMaxRetries sets the retry count (default 2, at most 16) and
// WithRetryBudget bounds the total wait of a call, and a client-wide retry
// quota (WithRetryQuota) bounds the retries of all calls during an outage.
// WithLogger logs every decision. Package retry holds these rules as plain policy, usable with
// go-retryablehttp on its own.
//
// # Shared requests and the lookup cache
//
// Identical billed lookups in flight (LookupIP of one address, LookupDomain
// of one name and Limit) share one request and one charge, each caller
// waiting with its own context. WithCache adds a Cache of answers, which
// LookupIP, LookupDomain, LookupIPs and LookupIPsAll consult before they
// send anything: NewMemoryCache keeps them in memory, module
// github.com/synthient-go/synthient/redis in a Redis that a fleet shares,
// and the Cache interface lets any store hold them. Only whole successful
// answers are stored; a cached one has CachedAt set.
//
// # Pagination
//
// ListExports returns one page of a feed's exports; AllExports is a lazy
// iter.Seq2 over every page. It sends nothing until the loop starts,
// follows next_cursor, stops on break, yields a failing page's error once,
// and stops with an *Error on a cursor that repeats.
//
// # Downloads
//
// DownloadExport streams an export into an io.Writer with constant memory,
// following the API's one 307 to the storage host without the API key.
// DownloadExportTo resolves the meta first and writes exactly its size;
// DownloadExportFile does so into a new, exclusively created temporary file
// (path.<digits>.part), optionally verifies the SHA-256 while the bytes
// stream, and moves it to path on success. A download is whole or an error
// (ErrSizeMismatch, ErrSizeUnknown, ErrChecksumMismatch): never short,
// never more than the expected size, never decoded. None retries the
// storage leg or a failure while reading.
//
// # Streams
//
// StreamProxies and its siblings (one per feed) and StreamRaw are lazy
// iter.Seq2 sequences over NDJSON events. Opening follows the standard
// class; after that, a failure ends the sequence with exactly one error and
// a clean close ends it without one. Breaking out of the loop or cancelling
// ctx closes the connection. ReconnectDelay gives the API's reconnect
// recipe for long-running consumers.
//
// # Observing calls
//
// WithObserver reports every call to an Observer as it happens: its start
// and end, each HTTP request with the retry decision taken on it, and the
// holds of rate-limit pacing. A client without one does no work for it.
// Module github.com/synthient-go/synthient/otel implements it with
// OpenTelemetry traces and metrics, in a module of its own: this one
// depends on no tracing library.
//
// # Testing
//
// Package synthienttest runs a realistic fake of the API on loopback, with
// fault injection; point a client at it with WithBaseURL. WithTransport
// accepts a mocked http.RoundTripper, WithBackoff tiny waits for tests that
// retry.
package synthient
