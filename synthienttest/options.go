package synthienttest

import (
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/synthient-go/synthient"
)

// DefaultCredits is the lookup credit balance of Server.APIKey unless
// WithCredits says otherwise.
const DefaultCredits = 50_000

// The stream defaults, as the real API's: a heartbeat blank line every 15 s
// (WithHeartbeat), a clean close after 30 min (WithStreamLifetime), and at
// most 2 open streams per key (WithStreamLimit).
const (
	DefaultHeartbeat      = 15 * time.Second
	DefaultStreamLifetime = 30 * time.Minute
	DefaultStreamLimit    = 2
)

// Option configures a Server. An invalid value makes NewServer panic, as
// the fake is a test helper.
type Option func(*config)

type config struct {
	now           func() time.Time
	credits       int64
	exportDays    int
	exportSize    func(feed synthient.Feed, id string) int64
	presignExpiry time.Duration
	rateLimits    bool
	rates         map[Bucket]rate
	streamLimit   int
	eventInterval time.Duration
	heartbeat     time.Duration
	lifetime      time.Duration
	maxEvents     int
	httpsDetails  DetailsForm
	listenAddr    string
	seed          uint64
	latency       time.Duration
	ipAnswers     map[netip.Addr]synthient.IPLookup
	domainAnswers map[string]synthient.DomainLookup
}

// defaultConfig is the configuration before the options.
func defaultConfig() config {
	return config{
		now:           time.Now,
		credits:       DefaultCredits,
		exportDays:    3,
		exportSize:    defaultExportSize,
		presignExpiry: 24 * time.Hour,
		rateLimits:    true,
		rates:         defaultRates(),
		streamLimit:   DefaultStreamLimit,
		eventInterval: 50 * time.Millisecond,
		heartbeat:     DefaultHeartbeat,
		lifetime:      DefaultStreamLifetime,
	}
}

// WithClock sets the server's clock. It dates everything the fake makes
// up (timestamps, export snapshots, the last_seen of lookups), refills the
// rate limiters and ages presigned URLs. Timers that pace streams and
// faults use real time. The default is time.Now. ManualClock is a settable
// clock for tests.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			panic("synthienttest: WithClock(nil)")
		}
		c.now = now
	}
}

// WithCredits sets the lookup credits of Server.APIKey (default
// DefaultCredits). Zero makes every lookup answer 402.
func WithCredits(n int64) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative credits")
		}
		c.credits = n
	}
}

// WithExportDays sets how many previous UTC days have a daily snapshot per
// feed (default 3, at most 3660). The current day always has hourly
// snapshots of its completed hours.
func WithExportDays(n int) Option {
	return func(c *config) {
		if n < 0 || n > 3660 {
			panic("synthienttest: export days outside 0 to 3660")
		}
		c.exportDays = n
	}
}

// WithExportSize sets the approximate size in bytes of every export file
// (at least 8): the file has as many rows as make about n bytes of Parquet
// for its feed, at least one. A file asked to be 64 KiB or more comes out
// within about 25% of n; the meta and the storage host report its real
// size. By default a daily file is about 96 to 128 KiB and an hourly one
// 48 to 64 KiB (some thousands of rows), which keeps tests fast.
func WithExportSize(n int64) Option {
	return func(c *config) {
		if n < 8 {
			panic("synthienttest: export size below 8 bytes")
		}
		c.exportSize = func(synthient.Feed, string) int64 { return n }
	}
}

// WithExportSizeFunc sets the approximate size of each export file by feed
// and export id ("2026-06-09" or "2026-06-10/13"), as WithExportSize does;
// sizes below 8 are read as 8. A file is written as it is served, a row
// group at a time, never held in memory: a large one (256 MiB for a
// benchmark) takes memory for one row group (8 MiB at most). Its size,
// rows and SHA-256 are found by writing it once, on first use (a listing,
// the meta or a download), and kept for the process. fn must give the
// same size for the same file each time, else the meta and the file
// served differ.
func WithExportSizeFunc(fn func(feed synthient.Feed, id string) int64) Option {
	return func(c *config) {
		if fn == nil {
			panic("synthienttest: WithExportSizeFunc(nil)")
		}
		c.exportSize = fn
	}
}

// WithPresignExpiry sets how long a presigned storage URL is valid,
// measured on the server's clock (default 24 h, at most 7 days).
func WithPresignExpiry(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second || d > 7*24*time.Hour {
			panic("synthienttest: presign expiry outside 1s to 7 days")
		}
		c.presignExpiry = d
	}
}

// WithoutRateLimits turns rate limiting off, whatever the order of the
// options (a WithRateLimit does not turn it back on): no request is
// answered 429 for its rate, and no RateLimit-* headers are sent. The
// concurrent-stream limit still applies.
func WithoutRateLimits() Option {
	return func(c *config) { c.rateLimits = false }
}

// WithRateLimit sets the rate of bucket b: perSecond must be positive and
// burst at least 1. The bucket refills on the server's clock, so a test
// with a ManualClock controls it exactly.
func WithRateLimit(b Bucket, perSecond float64, burst int) Option {
	return func(c *config) {
		if _, ok := defaultRates()[b]; !ok {
			panic("synthienttest: unknown rate-limit bucket " + strconv.Quote(string(b)))
		}
		if !(perSecond > 0) || math.IsInf(perSecond, 0) || burst < 1 {
			panic("synthienttest: a rate needs perSecond > 0 and burst >= 1")
		}
		c.rates[b] = rate{perSecond: perSecond, burst: burst}
	}
}

// WithStreamLimit sets how many streams one key may have open at once
// (default 2); one more is answered 429 without Retry-After.
func WithStreamLimit(n int) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative stream limit")
		}
		c.streamLimit = n
	}
}

// WithEventInterval sets the pause between two stream events (default
// 50 ms). The first event is sent as soon as the stream opens.
func WithEventInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: event interval must be positive")
		}
		c.eventInterval = d
	}
}

// WithHeartbeat sets the interval of a stream's heartbeat blank lines
// (default 15 s).
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: heartbeat must be positive")
		}
		c.heartbeat = d
	}
}

// WithStreamLifetime sets how long a stream lives before the server closes
// it cleanly (default 30 min).
func WithStreamLifetime(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("synthienttest: stream lifetime must be positive")
		}
		c.lifetime = d
	}
}

// WithMaxEvents makes the server close each stream cleanly after n events
// (default 0: no limit).
func WithMaxEvents(n int) Option {
	return func(c *config) {
		if n < 0 {
			panic("synthienttest: negative max events")
		}
		c.maxEvents = n
	}
}

// DetailsForm is how the honeypot_https stream sends an event's details.
type DetailsForm int

const (
	// DetailsString sends the parsed ClientHello as a JSON-encoded string,
	// as the OpenAPI document says (the default).
	DetailsString DetailsForm = iota
	// DetailsObject sends it as a JSON object (as go-synthient expects).
	DetailsObject
	// DetailsMixed sends a string, an object or null, in turn.
	DetailsMixed
)

// WithHTTPSDetails sets the form of the honeypot_https details.
func WithHTTPSDetails(f DetailsForm) Option {
	return func(c *config) { c.httpsDetails = f }
}

// WithListenAddr sets the address the API origin listens on, such as
// "127.0.0.1:8080", for a fake that other programs reach at a known URL.
// The storage host still takes a random loopback port. The default is a
// random loopback port.
func WithListenAddr(addr string) Option {
	return func(c *config) { c.listenAddr = addr }
}
