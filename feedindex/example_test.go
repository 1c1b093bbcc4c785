package feedindex_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/feedindex"
	"github.com/synthient-go/synthient/synthienttest"
)

// An index of the newest proxies export, checked at no cost, saved and
// opened again.
func ExampleIndex_Lookup() {
	now := func() time.Time { return time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC) }
	srv := synthienttest.NewServer(synthienttest.WithClock(now))
	defer srv.Close()
	c, err := srv.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	dir, err := os.MkdirTemp("", "feedindex-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // the example's files only

	path := filepath.Join(dir, "proxies.parquet")
	m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", path, &synthient.DownloadParams{Verify: true})
	if err != nil {
		log.Fatal(err)
	}
	f, err := exports.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ix, err := feedindex.New(feedindex.WithMaxAge(24*time.Hour), feedindex.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	added, err := ix.AddFile(synthient.FeedProxies, m.ID, f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows of", m.ID+":", added.Rows)

	if err := ix.Save(filepath.Join(dir, "feeds.synidx")); err != nil {
		log.Fatal(err)
	}
	ix.Close()
	opened, err := feedindex.Open(filepath.Join(dir, "feeds.synidx"), feedindex.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	defer opened.Close()
	hits := make([]feedindex.Hit, 0, len(feedindex.Feeds)) // a lookup into it allocates nothing
	for _, ip := range []string{"131.118.10.117", "192.0.2.1"} {
		hits = opened.Lookup(hits[:0], netip.MustParseAddr(ip))
		if len(hits) == 0 {
			fmt.Println(ip, "is in no feed")
		}
		for _, h := range hits {
			fmt.Println(ip, h.Feed, h.Provider, h.Type, h.CountryCode, h.ASN, h.LastSeen.Format(time.RFC3339))
		}
	}
	// Output:
	// rows of 2026-06-10/13: 3037
	// 131.118.10.117 proxies OXYLABS DATACENTER_PROXY ES 9009 2026-06-10T13:33:05Z
	// 192.0.2.1 is in no feed
}

// A follower keeps an index fresh: here until it added the newest
// hourly export of the proxies feed.
func ExampleFollower() {
	now := func() time.Time { return time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC) }
	srv := synthienttest.NewServer(synthienttest.WithClock(now))
	defer srv.Close()
	c, err := srv.NewClient()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ix, err := feedindex.New(feedindex.WithClock(now))
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	ctx, cancel := context.WithCancel(context.Background())
	fl, err := feedindex.NewFollower(c, ix, feedindex.WithFollowFeeds(synthient.FeedProxies),
		feedindex.WithFollowEvents(func(ev feedindex.FollowEvent) {
			if ev.Kind == feedindex.ExportAdded {
				fmt.Println(ev.Feed, ev.Kind, ev.Export)
				cancel()
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	err = fl.Run(ctx)
	fmt.Println(err)
	st := fl.Status()[0]
	fmt.Println(st.Feed, "exports:", st.Exports)
	// Output:
	// proxies export added 2026-06-10/13
	// context canceled
	// proxies exports: [2026-06-10/13]
}
