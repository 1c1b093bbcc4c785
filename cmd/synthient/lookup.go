package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
)

func (a *app) lookupCommand() *cobra.Command {
	return groupCommand("lookup", "Look up IP addresses and domains (billed)",
		a.lookupIPCommand(), a.lookupIPsCommand(), a.lookupDomainCommand())
}

func (a *app) lookupIPCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ip ADDR",
		Short: "Look up one IP address (1 credit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ip, err := netip.ParseAddr(strings.TrimSpace(args[0]))
			if err != nil {
				return usageError("%q is not an IP address", args[0])
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			r, err := c.LookupIP(cmd.Context(), ip)
			if err != nil {
				return err
			}
			if a.json() {
				return writeJSON(a.env.stdout, r)
			}
			return writeIPLookup(a.env.stdout, r)
		},
	}
}

func (a *app) lookupDomainCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "domain NAME",
		Short: "Look up a domain's honeypot intelligence (1 credit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient()
			if err != nil {
				return err
			}
			r, err := c.LookupDomain(cmd.Context(), args[0], &synthient.DomainLookupParams{Limit: limit})
			if err != nil {
				return err
			}
			if a.json() {
				return writeJSON(a.env.stdout, r)
			}
			return writeDomain(a.env.stdout, r)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "recent events to return, 1 to 1000 (default: the API's, 50)")
	return cmd
}

func writeDomain(w io.Writer, r *synthient.DomainLookup) error {
	t := newTable(w)
	t.row("Domain", r.Domain)
	t.row("Status", orDash(r.Status))
	t.row("Events", fmt.Sprintf("%d in 24h, %d in 30 days", r.Stats.Events24h, r.Stats.TotalEvents30d))
	t.row("Unique IPs", fmt.Sprintf("%d in 24h, %d in 30 days", r.UniqueIPs.Value24h, r.UniqueIPs.Value30d))
	if r.TopASN != nil {
		t.row("Top ASN", fmt.Sprintf("AS%d (%d events)", r.TopASN.ASN, r.TopASN.Events))
	}
	var subs, ports []string
	for _, s := range r.TopSubdomains {
		subs = append(subs, fmt.Sprintf("%s (%d)", s.Subdomain, s.Count))
	}
	for _, p := range r.TopPorts {
		ports = append(ports, fmt.Sprintf("%d (%d)", p.Port, p.Count))
	}
	t.row("Top subdomains", list(subs))
	t.row("Top ports", list(ports))
	s := r.ActivityStats
	t.row("Activity", fmt.Sprintf("peak %02d:00, quiet %02d:00, median %d/h, p95 %d/h, %s", s.PeakHour, s.QuietHour, s.MedianPerHour, s.P95PerHour, orDash(s.Cadence)))
	if err := t.flush(); err != nil {
		return err
	}
	if len(r.RecentEvents) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t = newTable(w)
	t.row("TIME", "SOURCE", "TARGET", "PORT", "COUNTRY")
	for _, e := range r.RecentEvents {
		t.row(unixTime(e.Timestamp), e.SourceIPMasked, e.TargetSubdomain, strconv.Itoa(e.Port), e.CountryCode)
	}
	return t.flush()
}

func (a *app) lookupIPsCommand() *cobra.Command {
	var file, failedFile string
	var concurrency int
	cmd := &cobra.Command{
		Use:   "ips --file F",
		Short: "Look up many IP addresses, in batches of 1000 (0.9 credit each)",
		Long: `Look up every address in a file (one per line; blank lines and lines starting
with # are ignored; "-" reads stdin), in batches of 1000 with bounded
concurrency. Results come in input order. A batch that fails, and every line
that is not an address, is reported on stderr with its addresses and written
to --failed; the exit code is then 3 (a failed batch) or 2 (invalid lines).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError("lookup ips needs --file (use - for stdin)")
			}
			if concurrency < 1 || concurrency > 64 {
				return usageError("--concurrency must be 1 to 64, not %d", concurrency)
			}
			in := a.env.stdin
			if file != "-" {
				f, err := openInterruptible(cmd.Context(), file)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			if err := checkFailedFile(failedFile, in); err != nil {
				return err
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			b := &batch{
				app:         a,
				client:      c,
				concurrency: concurrency,
				total:       -1,
			}
			if f, ok := in.(*os.File); ok && a.env.stderrIsTerminal() {
				if b.total, err = countAddresses(f); err != nil { // for the progress bar
					return err
				}
			}
			if failedFile != "" {
				f, err := os.Create(failedFile)
				if err != nil {
					return usageError("%v", err)
				}
				defer f.Close()
				b.failed = f
			}
			return b.run(cmd.Context(), in)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", `file of addresses, one per line ("-" for stdin)`)
	cmd.Flags().IntVar(&concurrency, "concurrency", 4, "batches in flight at once")
	cmd.Flags().StringVar(&failedFile, "failed", "", "write the addresses that were not looked up to this file")
	return cmd
}

// openInterruptible opens the file name for reading, which blocks for a
// named pipe until a writer opens it, unless ctx is done first. A file
// that cannot be opened is a usage error.
func openInterruptible(ctx context.Context, name string) (*os.File, error) {
	return interruptible(ctx, func() (*os.File, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError("%v", err)
		}
		return f, nil
	}, func(f *os.File) { f.Close() })
}

// checkFailedFile refuses a --failed file that is the input itself, by
// any path, hard link or symbolic link (or, with --file -, the file stdin
// was redirected from): creating it would empty the input before it is
// read.
func checkFailedFile(failed string, in io.Reader) error {
	f, ok := in.(*os.File)
	if failed == "" || !ok {
		return nil
	}
	inInfo, err := f.Stat()
	if err != nil || !inInfo.Mode().IsRegular() {
		// A pipe or a terminal cannot be checked: a pipe fed from the
		// --failed file itself (cat f | synthient lookup ips --file -
		// --failed f) loses what cat had not read yet when f is created,
		// and nothing here can tell what feeds a pipe.
		return nil
	}
	outInfo, err := os.Stat(failed)
	if err != nil || !os.SameFile(inInfo, outInfo) {
		return nil
	}
	return usageError("--failed %s is the input file: writing it would empty the addresses before they are read", failed)
}

// batch looks up an address file chunk by chunk, with at most concurrency
// chunks in flight, and prints results in input order.
type batch struct {
	app         *app
	client      *synthient.Client
	concurrency int
	failed      io.Writer

	total int64 // addresses in the input, for the progress bar; -1 if unknown

	mu       sync.Mutex
	failedN  int // addresses in failed chunks
	invalidN int // lines that are not addresses
	doneN    int // addresses looked up
	bar      *progressbar.ProgressBar
	tbl      *table
}

type chunk struct {
	seq   int
	addrs []netip.Addr
	// result
	results []synthient.IPLookup
	missing []netip.Addr
	err     error
}

func (b *batch) run(ctx context.Context, in io.Reader) error {
	if b.app.env.stderrIsTerminal() {
		b.bar = progressbar.NewOptions64(b.total,
			progressbar.OptionSetWriter(b.app.progress),
			progressbar.OptionSetDescription("looking up"),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetSpinnerChangeInterval(0), // no spinner goroutine
		)
	}
	if !b.app.json() {
		b.tbl = newTable(b.app.env.stdout)
		b.tbl.row(ipHeader...)
	}

	chunks := make(chan *chunk)
	readDone := make(chan error, 1)
	go func() {
		readDone <- b.read(ctx, in, chunks)
		close(chunks)
	}()

	// At most concurrency chunks are in flight; finished chunks are printed
	// in input order as soon as the ones before them are.
	finished := make(chan *chunk)
	pending := map[int]*chunk{}
	next, inflight := 0, 0
	var printErr error
	receive := func(c *chunk) {
		inflight--
		pending[c.seq] = c
		for c, ok := pending[next]; ok; c, ok = pending[next] {
			delete(pending, next)
			next++
			if err := b.print(c); err != nil && printErr == nil {
				printErr = err
			}
		}
	}
	dispatch := func(c *chunk) {
		inflight++
		go func() {
			c.results, c.err = b.client.LookupIPs(ctx, c.addrs)
			var dec *synthient.DecodeError
			if errors.As(c.err, &dec) && len(dec.Missing) > 0 {
				c.missing = dec.Missing
			}
			finished <- c
		}()
	}
read:
	for {
		if inflight == b.concurrency {
			select {
			case c := <-finished:
				receive(c)
			case <-ctx.Done():
				break read
			}
			continue
		}
		select {
		case c, ok := <-chunks:
			if !ok {
				break read
			}
			dispatch(c)
		case c := <-finished:
			receive(c)
		case <-ctx.Done():
			break read
		}
	}
	for inflight > 0 {
		receive(<-finished)
	}
	if b.tbl != nil {
		if err := b.tbl.flush(); err != nil && printErr == nil {
			printErr = err
		}
	}
	if b.bar != nil {
		b.bar.Finish()
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: what was not looked up is reported above
	}
	if err := <-readDone; err != nil {
		return err
	}
	if printErr != nil {
		return printErr
	}
	switch {
	case b.failedN > 0:
		invalid := ""
		if b.invalidN > 0 {
			invalid = "; " + plural(b.invalidN, "line is not an IP address", "lines are not IP addresses")
		}
		return &exitError{code: exitAPI, err: fmt.Errorf("%d of %d addresses were not looked up%s (listed above%s)",
			b.failedN, b.failedN+b.doneN, invalid, b.failedHint())}
	case b.invalidN > 0:
		return &exitError{code: exitUsage, err: fmt.Errorf("%s (listed above%s)",
			plural(b.invalidN, "line is not an IP address", "lines are not IP addresses"), b.failedHint())}
	}
	return nil
}

// plural renders n with the singular or plural noun phrase.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func (b *batch) failedHint() string {
	if b.failed == nil {
		return ""
	}
	return " and in the --failed file"
}

// maxInputLine is the longest input line read; a longer one is reported as
// invalid and skipped.
const maxInputLine = 64 << 10

// countAddresses counts the lines of a regular file that hold something
// other than a comment, and rewinds it; -1 if f is not a regular file or
// holds a line too long to count.
func countAddresses(f *os.File) (int64, error) {
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return -1, nil
	}
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxInputLine)
	for sc.Scan() {
		if _, ok := addressText(sc.Text()); ok {
			n++
		}
	}
	if sc.Err() != nil {
		n = -1
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading the addresses: %w", err)
	}
	return n, nil
}

// addressText returns a line trimmed of spaces; ok is false for a blank
// line or a # comment, which hold no address.
func addressText(line string) (text string, ok bool) {
	text = strings.TrimSpace(line)
	return text, text != "" && !strings.HasPrefix(text, "#")
}

// read splits the input into chunks of at most 1000 addresses, reporting
// every line that is not an address.
func (b *batch) read(ctx context.Context, in io.Reader, out chan<- *chunk) error {
	br := bufio.NewReaderSize(in, maxInputLine)
	seq, line := 0, 0
	cur := &chunk{seq: seq}
	send := func() bool {
		select {
		case out <- cur:
		case <-ctx.Done():
			return false
		}
		seq++
		cur = &chunk{seq: seq}
		return true
	}
	for {
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line++
			b.reportInvalid(line, string(raw), string(raw[:80])+"...")
			for err == bufio.ErrBufferFull { // skip the rest of the line
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("reading the addresses: %w", err)
			}
			if err == io.EOF {
				break
			}
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading the addresses: %w", err)
		}
		if len(raw) > 0 {
			line++
			if line == 1 {
				raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // a UTF-8 byte order mark
			}
			if text, ok := addressText(string(raw)); ok {
				ip, perr := netip.ParseAddr(text)
				if perr != nil || ip.Zone() != "" {
					b.reportInvalid(line, text, text)
				} else {
					cur.addrs = append(cur.addrs, ip)
				}
			}
		}
		if len(cur.addrs) == synthient.MaxBatchSize && !send() {
			return ctx.Err()
		}
		if err == io.EOF {
			break
		}
	}
	if len(cur.addrs) > 0 && !send() {
		return ctx.Err()
	}
	return nil
}

// reportInvalid reports the line that is not an address on stderr, cut
// to 80 bytes after every substring shaped like a key and every secret in
// it was redacted (an API key in the wrong file, also inside a line such
// as "x-api-key: KEY"), and writes failedText to the --failed file as it
// is.
func (b *batch) reportInvalid(line int, text, failedText string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.invalidN++
	secrets := b.app.secrets
	secrets.addKeyShapes(text)
	shown := truncate(secrets.redactString(text), 80)
	fmt.Fprintf(b.app.env.stderr, "synthient: line %d: %q is not an IP address; not looked up\n", line, shown)
	if b.failed != nil {
		fmt.Fprintln(b.failed, failedText)
	}
}

// print writes a finished chunk: its results, and its failures on stderr
// and in the --failed file.
func (b *batch) print(c *chunk) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	notDone := c.missing
	if c.err != nil && c.missing == nil {
		notDone = c.addrs
	}
	for i := range c.results {
		r := &c.results[i]
		if b.app.json() {
			if err := writeJSON(b.app.env.stdout, r); err != nil {
				return err
			}
		} else {
			b.tbl.row(ipRow(r)...)
		}
	}
	b.doneN += len(c.results)
	if len(notDone) > 0 {
		b.failedN += len(notDone)
		strs := make([]string, len(notDone))
		for i, ip := range notDone {
			strs[i] = ip.String()
		}
		fmt.Fprintf(b.app.env.stderr, "synthient: batch %d (%d addresses) failed: %s; not looked up: %s\n",
			c.seq+1, len(notDone), b.app.describe(c.err), strings.Join(strs, " "))
		if b.failed != nil {
			for _, s := range strs {
				fmt.Fprintln(b.failed, s)
			}
		}
	}
	if b.bar != nil {
		b.bar.Add(len(c.addrs))
	}
	return nil
}
