package exports_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// Download an export with the SDK, then read its rows as ProxyRow values.
func ExampleFile_Proxies() {
	// A fake API on a fixed clock, so that its files are the same each run.
	srv := synthienttest.NewServer(synthienttest.WithClock(func() time.Time {
		return time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)
	}))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()
	dir, _ := os.MkdirTemp("", "example")
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "proxies.parquet")

	meta, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", path,
		&synthient.DownloadParams{Verify: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := exports.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	n := int64(0)
	for row, err := range f.Proxies() {
		if err != nil {
			fmt.Println(err)
			return
		}
		if n < 3 {
			fmt.Println(time.Unix(row.Timestamp, 0).UTC().Format(time.TimeOnly), row.IP, row.Type, row.CountryCode, row.ASN)
		}
		n++
	}
	fmt.Println(n == meta.Rows, meta.ID)
	// Output:
	// 13:00:00 168.146.104.109 RESIDENTIAL_PROXY US 20115
	// 13:00:01 34.168.29.204 RESIDENTIAL_PROXY GB 2856
	// 13:00:02 40.104.253.150 DATACENTER_PROXY CA 16276
	// true 2026-06-10/13
}

// The untyped rows carry every column of the file, also those a newer file
// adds, with their names.
func ExampleFile_Rows() {
	srv := synthienttest.NewServer(synthienttest.WithClock(func() time.Time {
		return time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)
	}))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	// An export kept in memory: NewFile reads any io.ReaderAt.
	var buf bytes.Buffer
	if _, err := c.DownloadExportTo(context.Background(), synthient.FeedHoneypotDNS, "2026-06-10/05", &buf, nil); err != nil {
		fmt.Println(err)
		return
	}
	f, err := exports.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	var cols []string
	for _, col := range f.Columns() {
		cols = append(cols, col.Name+" "+col.Type)
	}
	fmt.Println(strings.Join(cols, ", "))
	for row, err := range f.Rows() {
		if err != nil {
			fmt.Println(err)
			return
		}
		domain, _ := row.Get("domain")
		fmt.Printf("%q %v\n", domain, row.Values)
		break
	}
	// Output:
	// timestamp int64, tunnel_id int64, domain string, port int32
	// "example.org" [1781067600000 3532018 example.org 53]
}

// WithMaxPageSize bounds the memory a page may take: a page over the limit
// is a *FormatError, before its memory is allocated. Here a limit of 4 KiB
// refuses the pages of an export of the fake, whose pages are larger.
func ExampleWithMaxPageSize() {
	srv := synthienttest.NewServer(synthienttest.WithClock(func() time.Time {
		return time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)
	}))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()
	var buf bytes.Buffer
	if _, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10/05", &buf, nil); err != nil {
		fmt.Println(err)
		return
	}
	for _, limit := range []int64{exports.DefaultMaxPageSize, 4 << 10} {
		f, err := exports.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()), exports.WithMaxPageSize(limit))
		if err != nil {
			fmt.Println(err)
			return
		}
		n := 0
		for _, err := range f.Proxies() {
			var fe *exports.FormatError
			if errors.As(err, &fe) {
				fmt.Printf("limit %d: a *FormatError after %d rows\n", limit, n)
				break
			}
			n++
		}
		if n == int(f.NumRows()) {
			fmt.Printf("limit %d: every row read\n", limit)
		}
	}
	// Output:
	// limit 268435456: every row read
	// limit 4096: a *FormatError after 0 rows
}
