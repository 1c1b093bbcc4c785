// Package synthienttest runs a realistic, deterministic fake of the
// Synthient API v4 and of its export storage host, on two loopback origins,
// for testing code that uses package synthient (or speaks HTTP to the API
// directly).
//
//	srv := synthienttest.NewServer()
//	defer srv.Close()
//	c, err := srv.NewClient() // sends srv.APIKey to srv.URL
//
// # What it serves
//
// Every endpoint of the API: /health, /account/me, /lookup/ip/{ip},
// /lookup/ips, /lookup/domain/{domain}, and for each feed (proxies,
// anonymizers, torrents, helio/http, helio/https, helio/dns, helio/adb,
// ja4t) the export listing, meta, downloads and the NDJSON stream.
// Responses are encoded from package synthient's model types, so their wire
// format is the one the SDK reads.
//
// Data is made up but stable: the same address always gets the same
// network (a /24 or /48 shares it), location and intelligence, drawn from
// tables of real operators and ASNs, cities with their coordinates, IANA
// time zones and geohashes, and the API's category and behaviour
// vocabularies. About one address in four has no intelligence; private and
// other unrouted addresses have neither network nor location; the
// documentation prefixes use documentation ASNs, 192.0.2.0/24 is clean and
// 2001:db8::/32 has no intelligence. Timestamps count back from the
// server's clock (WithClock), so with a fixed clock every answer is the same
// from run to run.
//
// # Keys, credits and limits
//
// Keys go in X-Api-Key. A key that is not UUID-shaped gets a text/plain
// 401, as from the API's edge; an unknown key a problem+json 401; a key
// without the endpoint's scope a 403. Server.APIKey has every scope
// (AllScopes) and DefaultCredits credits; AddKey makes keys with chosen
// scopes and credits. A lookup costs 1 credit, a batch of n distinct valid
// addresses ceil(0.9 n); a key without enough answers 402.
//
// Each key has token buckets at the published rates (see Bucket), refilled
// on the server's clock: every answer past authentication carries
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, and an empty
// bucket answers 429 with Retry-After. WithRateLimit sets a rate,
// WithoutRateLimits turns them off. A key may hold WithStreamLimit streams
// at once (default 2); one more is answered 429 without Retry-After.
//
// # Exports
//
// Each feed has hourly snapshots of the completed hours of the current UTC
// day and a daily one for each of the previous WithExportDays days (in the
// first hour of a day, the previous day's hours too; its daily rollup is
// ready at 00:30 and until then answers 404 with Retry-After). Listings are
// newest first with opaque cursors. A download answers 307 to a URL on
// StorageURL presigned with a per-server secret and valid for
// WithPresignExpiry; the storage host answers 403 to a bad or expired
// signature. Files are real Parquet, with the columns and types the meta
// lists (package exports reads them; so do DuckDB, pyarrow and the like):
// snappy pages, dictionary-encoded columns of few values, row groups of at
// most 122,880 rows (DuckDB's size) or 8 MiB. Their rows come from the
// streams' generators, so they agree with the lookups, dated evenly over
// the export's hour or day; each feed's files draw on 8,192 events made
// once per process, each file from its own offset, over again when it
// has more rows. A file depends only on its feed, id and size: the same
// bytes, and SHA-256, on every server and run, whatever the clock. Files
// are small by default and about as large as WithExportSize or
// WithExportSizeFunc say; each is written as it is served, and the meta
// reports its real size, rows and SHA-256.
//
// # Streams
//
// A stream sends one realistic event per line every WithEventInterval
// (honeypot timestamps in milliseconds, honeypot_https details as a JSON
// string unless WithHTTPSDetails says otherwise, adb commands in base64),
// a blank heartbeat line every WithHeartbeat, and closes cleanly after
// WithStreamLifetime or WithMaxEvents events. It stops at once when the
// client goes away or the server closes.
//
// # Faults and the request log
//
// Inject makes the next n requests to a route (RouteLookupIP, RouteStorage,
// ...) fail in a chosen way (see FaultKind): an error status with or
// without Retry-After, a connection closed after the request, a reset or a
// truncation in the middle of the body, slow headers or a slow body, an
// oversized stream line. Arrivals counts the requests each route received,
// faulted or not, and Requests returns the log: time, method, route, path,
// status, User-Agent, Accept and Content-Type, and whether an API key,
// Authorization or cookie was sent (never their values). Reset clears
// faults, counts and log.
//
// Every answer carries an X-Request-Id. A Server is safe for concurrent
// use; Close ends streams and injected waits and returns once every handler
// has returned.
package synthienttest
