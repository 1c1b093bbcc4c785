package synthient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/synthient-go/synthient/internal/ndjson"
	"github.com/synthient-go/synthient/retry"
)

// Feed names a data feed: a stream of real-time events and a series of
// Parquet exports.
type Feed string

// The feeds of the API.
const (
	FeedProxies       Feed = "proxies"
	FeedAnonymizers   Feed = "anonymizers"
	FeedTorrents      Feed = "torrents"
	FeedHoneypotHTTP  Feed = "honeypot_http"  // path segment helio/http
	FeedHoneypotHTTPS Feed = "honeypot_https" // path segment helio/https
	FeedHoneypotDNS   Feed = "honeypot_dns"   // path segment helio/dns
	FeedHoneypotADB   Feed = "honeypot_adb"   // path segment helio/adb
	FeedJA4T          Feed = "ja4t"
)

// Feeds lists every feed.
var Feeds = []Feed{
	FeedProxies, FeedAnonymizers, FeedTorrents,
	FeedHoneypotHTTP, FeedHoneypotHTTPS, FeedHoneypotDNS, FeedHoneypotADB,
	FeedJA4T,
}

// segment returns the feed's URL path segment, and whether f is a known
// feed.
func (f Feed) segment() (string, bool) {
	switch f {
	case FeedProxies, FeedAnonymizers, FeedTorrents, FeedJA4T:
		return string(f), true
	case FeedHoneypotHTTP, FeedHoneypotHTTPS, FeedHoneypotDNS, FeedHoneypotADB:
		return "helio/" + strings.TrimPrefix(string(f), "honeypot_"), true
	}
	return "", false
}

// Valid reports whether f is one of the API's feeds.
func (f Feed) Valid() bool {
	_, ok := f.segment()
	return ok
}

// ParseFeed returns the feed named s: a public name ("proxies",
// "honeypot_http") or one of the aliases the official CLI accepts
// ("proxy", "anonymizer", "torrent", "helio/http", "helios_http", "http",
// "https", "tls", "dns", "adb"). Case is ignored. An unknown name gives an
// error matching ErrInvalidArgument.
func ParseFeed(s string) (Feed, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	switch n {
	case "proxy":
		return FeedProxies, nil
	case "anonymizer":
		return FeedAnonymizers, nil
	case "torrent":
		return FeedTorrents, nil
	case "https", "tls":
		return FeedHoneypotHTTPS, nil
	case "http", "dns", "adb":
		return Feed("honeypot_" + n), nil
	}
	for _, prefix := range []string{"helio/", "helios_", "helio_"} {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			n = "honeypot_" + rest
		}
	}
	if f := Feed(n); f.Valid() {
		return f, nil
	}
	return "", invalid("unknown feed %q", s)
}

func checkFeed(op string, f Feed) (string, error) {
	seg, ok := f.segment()
	if !ok {
		return "", invalid("%s: unknown feed %q", op, string(f))
	}
	return seg, nil
}

// MaxLineSize is the longest line a stream may send: a longer one ends the
// stream with a *DecodeError matching ErrLineTooLong, without reading it
// into memory.
const MaxLineSize = 16 << 20

// ErrLineTooLong is matched (errors.Is) by the error of a stream line
// longer than MaxLineSize.
var ErrLineTooLong = errors.New("stream line longer than 16 MiB")

// StreamProxies streams the proxies feed. See StreamRaw for how streams
// open, end and fail.
func (c *Client) StreamProxies(ctx context.Context) iter.Seq2[ProxyEvent, error] {
	return streamOf[ProxyEvent](c, ctx, "StreamProxies", FeedProxies)
}

// StreamAnonymizers streams the anonymizers feed. See StreamRaw.
func (c *Client) StreamAnonymizers(ctx context.Context) iter.Seq2[AnonymizerEvent, error] {
	return streamOf[AnonymizerEvent](c, ctx, "StreamAnonymizers", FeedAnonymizers)
}

// StreamTorrents streams the torrents feed. See StreamRaw.
func (c *Client) StreamTorrents(ctx context.Context) iter.Seq2[TorrentEvent, error] {
	return streamOf[TorrentEvent](c, ctx, "StreamTorrents", FeedTorrents)
}

// StreamJA4T streams the ja4t feed. See StreamRaw.
func (c *Client) StreamJA4T(ctx context.Context) iter.Seq2[JA4TEvent, error] {
	return streamOf[JA4TEvent](c, ctx, "StreamJA4T", FeedJA4T)
}

// StreamHoneypotHTTP streams the honeypot_http feed (timestamps in
// milliseconds). See StreamRaw.
func (c *Client) StreamHoneypotHTTP(ctx context.Context) iter.Seq2[HoneypotHTTPEvent, error] {
	return streamOf[HoneypotHTTPEvent](c, ctx, "StreamHoneypotHTTP", FeedHoneypotHTTP)
}

// StreamHoneypotHTTPS streams the honeypot_https feed (timestamps in
// milliseconds). See StreamRaw.
func (c *Client) StreamHoneypotHTTPS(ctx context.Context) iter.Seq2[HoneypotHTTPSEvent, error] {
	return streamOf[HoneypotHTTPSEvent](c, ctx, "StreamHoneypotHTTPS", FeedHoneypotHTTPS)
}

// StreamHoneypotDNS streams the honeypot_dns feed (timestamps in
// milliseconds). The API may not offer it to every key (a 403 or 404). See
// StreamRaw.
func (c *Client) StreamHoneypotDNS(ctx context.Context) iter.Seq2[HoneypotDNSEvent, error] {
	return streamOf[HoneypotDNSEvent](c, ctx, "StreamHoneypotDNS", FeedHoneypotDNS)
}

// StreamHoneypotADB streams the honeypot_adb feed. The API may not offer it
// to every key (a 403 or 404). See StreamRaw.
func (c *Client) StreamHoneypotADB(ctx context.Context) iter.Seq2[HoneypotADBEvent, error] {
	return streamOf[HoneypotADBEvent](c, ctx, "StreamHoneypotADB", FeedHoneypotADB)
}

// StreamRaw streams any feed's events as raw JSON, one per NDJSON line.
//
// The sequence is lazy: the stream opens when the loop starts, with the
// standard retry class (a 429 without Retry-After, which means too many
// open streams, is returned at once). Blank lines (the heartbeats the API
// sends about every 15 s) are skipped; "\r\n" and a final line without a
// newline are accepted. After the response headers arrived nothing is
// retried: a failure ends the sequence with exactly one error (a read
// failure, a line that does not decode, a line longer than MaxLineSize),
// and a clean close by the server ends it without one (the API closes
// streams after about 30 minutes; see the reconnect example). WithTimeout
// bounds each read, so a connection silent for longer gives a
// *TimeoutError. Breaking out of the loop, cancelling ctx or an error
// closes the connection at once; so does the client's Close, which ends
// the sequence with an error matching ErrClosed.
func (c *Client) StreamRaw(ctx context.Context, feed Feed) iter.Seq2[json.RawMessage, error] {
	return stream(c, ctx, "StreamRaw", feed, func(line []byte) (json.RawMessage, error) {
		if !json.Valid(line) {
			var v any
			return nil, json.Unmarshal(line, &v) // the syntax error, for the DecodeError
		}
		return bytes.Clone(line), nil
	})
}

func streamOf[T any](c *Client, ctx context.Context, name string, feed Feed) iter.Seq2[T, error] {
	return stream(c, ctx, name, feed, func(line []byte) (T, error) {
		var v T
		err := json.Unmarshal(line, &v)
		return v, err
	})
}

// stream opens feed's stream when iterated and yields each line decoded.
func stream[T any](c *Client, ctx context.Context, name string, feed Feed, decode func([]byte) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		ctx, call := c.startCall(ctx, name, retry.Standard)
		var err error
		defer call.end(&err)
		if err = streamLines(c, ctx, name, feed, decode, yield); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}

// streamLines opens feed's stream and yields each line decoded. It
// returns the error that ends the stream, after closing it: nil when the
// server closed it cleanly or yield asked to stop.
func streamLines[T any](c *Client, ctx context.Context, name string, feed Feed, decode func([]byte) (T, error), yield func(T, error) bool) error {
	seg, err := checkFeed(name, feed)
	if err != nil {
		return err
	}
	op := &operation{
		name:   name,
		method: http.MethodGet,
		route:  "/feeds/{feed}/stream",
		path:   "/feeds/" + seg + "/stream",
		class:  retry.Standard,
		accept: mediaNDJSON,
		bucket: streamBucket,
	}
	// The stream's own context, which Close cancels.
	ctx, end, ok := c.streams.start(ctx)
	defer end()
	if !ok {
		return closedError(name)
	}
	resp, m, err := c.do(ctx, op)
	if err != nil {
		return closedStream(ctx, m, err)
	}
	defer c.closeIdleIfClosed() // after the body is closed
	defer resp.Body.Close()     //nolint:errcheck // read to the end or given up: its Close says nothing of the stream
	lines := ndjson.NewReader(resp.Body, MaxLineSize)
	done := ctx.Done()
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return closedStream(ctx, m, nil) // the end, unless Close cut it
		}
		select {
		case <-done:
			// Cancelled, or the client closed: no event read before is
			// yielded after it.
			err = ctx.Err()
		default:
		}
		switch {
		case errors.Is(err, ndjson.ErrTooLong):
			return decodeError(m, resp.StatusCode, ErrLineTooLong)
		case err != nil:
			return closedStream(ctx, m, readError(ctx, m, err))
		}
		v, err := decode(line)
		if err != nil {
			return decodeError(m, resp.StatusCode, err)
		}
		if !yield(v, nil) {
			return nil
		}
	}
}

// closedStream returns err, the error that ends a stream with context
// ctx, or when Close ended the stream, the *Error of the call m describes
// matching ErrClosed.
func closedStream(ctx context.Context, m meta, err error) error {
	if endedByClose(ctx) {
		return opError(m, "", ErrClosed)
	}
	return err
}

// MinReconnectDelay is the shortest wait before reopening a stream that
// ended with an error.
const MinReconnectDelay = 2 * time.Second

// ReconnectDelay tells a long-running consumer how long to wait before
// reopening a stream that ended with err, following the API's recipe: at
// once after a clean close (err == nil: the API closes streams after about
// 30 minutes); max(Retry-After, MinReconnectDelay) after any other error;
// and never (ok is false) after a 401 or 403, which waiting does not fix,
// after an invalid argument, or once the context was cancelled or expired.
func ReconnectDelay(err error) (wait time.Duration, ok bool) {
	if err == nil {
		return 0, true
	}
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden {
			return 0, false
		}
		if apiErr.RetryAfter != nil && *apiErr.RetryAfter > MinReconnectDelay {
			return *apiErr.RetryAfter, true
		}
	}
	return MinReconnectDelay, true
}
