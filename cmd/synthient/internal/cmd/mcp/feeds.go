package mcp

import (
	"context"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// feedStream describes a feed for list_feed_streams.
type feedStream struct {
	Name        string   `json:"name" jsonschema:"the feed's name, for the stream argument of the other tools"`
	Aliases     []string `json:"aliases" jsonschema:"other names the stream argument takes"`
	Description string   `json:"description"`
}

// feedStreams are the feeds, in the order of synthient.Feeds, with the
// aliases synthient.ParseFeed takes.
var feedStreams = []feedStream{
	{"proxies", []string{"proxy"}, "Proxy addresses observed in residential, mobile and datacenter networks, with provider and type."},
	{"anonymizers", []string{"anonymizer"}, "VPN, Tor, private relay and other anonymizer ranges."},
	{"torrents", []string{"torrent"}, "BitTorrent DHT and tracker peer sightings, with the files and peers seen."},
	{"honeypot_http", []string{"helio/http", "helios_http", "http"}, "HTTP requests captured by Helios honeypot sensors."},
	{"honeypot_https", []string{"helio/https", "helios_https", "https", "tls"}, "TLS ClientHellos captured by Helios honeypot sensors."},
	{"honeypot_dns", []string{"helio/dns", "helios_dns", "dns"}, "DNS queries seen by Helios honeypot tunnels."},
	{"honeypot_adb", []string{"helio/adb", "helios_adb", "adb"}, "Android Debug Bridge commands captured by Helios honeypot sensors."},
	{"ja4t", nil, "JA4T TCP fingerprints of observed connections."},
}

// streamArg is the description of every stream argument.
var streamArg = "the feed: " + strings.Join(cmdutil.FeedNames(), ", ") + " (list_feed_streams lists them and their aliases)"

// parseStream parses the stream argument.
func parseStream(s string) (synthient.Feed, error) {
	f, err := synthient.ParseFeed(s)
	if err != nil {
		return "", argError("stream", "unknown feed %q: one of %s", s, strings.Join(cmdutil.FeedNames(), ", "))
	}
	return f, nil
}

type noArgs struct{}

type listFeedStreamsOut struct {
	Streams []feedStream `json:"streams"`
	outcome
}

func addListFeedStreams(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{name: "list_feed_streams", title: "List the feeds",
		description: "List Synthient's feeds (each has real-time events for sample_stream and Parquet snapshots for list_feed_snapshots), with their aliases. Free; sends nothing."},
		func(context.Context, noArgs) (*listFeedStreamsOut, error) {
			return &listFeedStreamsOut{Streams: feedStreams}, nil
		})
}

func (o *listFeedStreamsOut) text() string {
	var b strings.Builder
	t := render.NewTable(&b)
	t.Row("NAME", "ALIASES", "DESCRIPTION")
	for _, s := range o.Streams {
		t.Row(s.Name, render.List(s.Aliases), s.Description)
	}
	_ = t.Flush() // a Builder does not fail
	return b.String()
}

type listFeedSnapshotsIn struct {
	Stream string `json:"stream"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the page size, 1 to 500 (default 100)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the page before; leave it out for the first page"`
}

type listFeedSnapshotsOut struct {
	*synthient.ExportPage
	outcome
}

func addListFeedSnapshots(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{name: "list_feed_snapshots", title: "List a feed's snapshots",
		bounds:      []bound{{name: "limit", min: 1, max: 500}},
		description: "List a feed's Parquet snapshots (hourly ones of today, daily ones before), newest first, a page at a time: next_cursor fetches the next. Free.",
		args:        map[string]string{"stream": streamArg}},
		func(ctx context.Context, in listFeedSnapshotsIn) (*listFeedSnapshotsOut, error) {
			feed, err := parseStream(in.Stream)
			if err != nil {
				return nil, err
			}
			page, err := t.client.ListExports(ctx, feed, &synthient.ListExportsParams{Limit: in.Limit, Cursor: in.Cursor})
			if err != nil {
				return nil, invalidArg("cursor", err)
			}
			return &listFeedSnapshotsOut{ExportPage: page}, nil
		})
}

func (o *listFeedSnapshotsOut) text() string {
	var b strings.Builder
	_ = render.WriteExports(&b, o.Exports) // a Builder does not fail
	if o.NextCursor != "" {
		b.WriteString("More: call again with cursor " + o.NextCursor + "\n")
	}
	return b.String()
}

type feedSnapshotMetaIn struct {
	Stream string `json:"stream"`
	Date   string `json:"date" jsonschema:"the snapshot: YYYY-MM-DD (daily), YYYY-MM-DD/HH (hourly, UTC), or latest (the newest hourly)"`
}

type feedSnapshotMetaOut struct {
	*synthient.ExportMeta
	outcome
}

func addFeedSnapshotMeta(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{name: "feed_snapshot_meta", title: "Describe a feed snapshot",
		description: "Describe one Parquet snapshot of a feed: its SHA-256, size, rows, columns and dates. Free.",
		args:        map[string]string{"stream": streamArg}},
		func(ctx context.Context, in feedSnapshotMetaIn) (*feedSnapshotMetaOut, error) {
			feed, err := parseStream(in.Stream)
			if err != nil {
				return nil, err
			}
			m, err := t.client.ExportMeta(ctx, feed, strings.TrimSpace(in.Date))
			if err != nil {
				return nil, invalidArg("date", err)
			}
			return &feedSnapshotMetaOut{ExportMeta: m}, nil
		})
}

func (o *feedSnapshotMetaOut) text() string {
	var b strings.Builder
	_ = render.WriteExportMeta(&b, o.ExportMeta) // a Builder does not fail
	return b.String()
}

type getAccountOut struct {
	*synthient.Account
	outcome
}

func addGetAccount(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{name: "get_account", title: "Show the account",
		description: "Show the account: name, organization, the key's scopes, and its lookup credits (lookup_quota.credits) and when they refill (resets_in, seconds). Free."},
		func(ctx context.Context, _ noArgs) (*getAccountOut, error) {
			acct, err := t.client.Account(ctx)
			if err != nil {
				return nil, err
			}
			return &getAccountOut{Account: acct}, nil
		})
}

func (o *getAccountOut) text() string {
	var b strings.Builder
	_ = render.WriteAccount(&b, o.Account) // a Builder does not fail
	return b.String()
}
