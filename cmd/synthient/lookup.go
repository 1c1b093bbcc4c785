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
	var o lookupIPsOptions
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
			if err := o.check(); err != nil {
				return err
			}
			return a.lookupIPs(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.file, "file", "", `file of addresses, one per line ("-" for stdin)`)
	cmd.Flags().IntVar(&o.concurrency, "concurrency", 4, "batches in flight at once")
	cmd.Flags().StringVar(&o.failed, "failed", "", "write the addresses that were not looked up to this file")
	return cmd
}

// lookupIPsOptions are the flags of lookup ips.
type lookupIPsOptions struct {
	file, failed string
	concurrency  int
}

// check refuses a missing --file, then a --concurrency out of range.
func (o *lookupIPsOptions) check() error {
	if o.file == "" {
		return usageError("lookup ips needs --file (use - for stdin)")
	}
	if o.concurrency < 1 || o.concurrency > 64 {
		return usageError("--concurrency must be 1 to 64, not %d", o.concurrency)
	}
	return nil
}

// lookupIPs runs lookup ips in its steps: open the input, refuse a
// --failed file that is the input, build the batch, create the --failed
// file, and run the batch. The files are closed when it returns.
func (a *app) lookupIPs(ctx context.Context, o *lookupIPsOptions) error {
	in, closeIn, err := a.openBatchInput(ctx, o.file)
	if err != nil {
		return err
	}
	defer closeIn()
	if err := checkFailedFile(o.failed, in); err != nil {
		return err
	}
	b, err := a.newBatch(o.concurrency, in)
	if err != nil {
		return err
	}
	closeFailed, err := b.createFailed(o.failed)
	if err != nil {
		return err
	}
	defer closeFailed()
	return b.run(ctx, in)
}

// openBatchInput opens the --file of lookup ips: stdin for "-", else the
// file, which the returned func closes (for stdin it does nothing).
func (a *app) openBatchInput(ctx context.Context, file string) (io.Reader, func(), error) {
	if file == "-" {
		return a.env.stdin, func() {}, nil
	}
	f, err := openInterruptible(ctx, file)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// newBatch builds the batch with a client from the global flags. When
// stderr is a terminal and the input is a file, it counts the addresses
// first, for the progress bar (see countAddresses).
func (a *app) newBatch(concurrency int, in io.Reader) (*batch, error) {
	c, err := a.newClient()
	if err != nil {
		return nil, err
	}
	b := &batch{
		app:         a,
		client:      c,
		concurrency: concurrency,
		total:       -1,
	}
	if f, ok := in.(*os.File); ok && a.env.stderrIsTerminal() {
		if b.total, err = countAddresses(f); err != nil { // for the progress bar
			return nil, err
		}
	}
	return b, nil
}

// createFailed creates the --failed file name, when one is named, for the
// batch to write what it did not look up; the returned func closes it. A
// file that cannot be created is a usage error.
func (b *batch) createFailed(name string) (func(), error) {
	if name == "" {
		return func() {}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, usageError("%v", err)
	}
	b.failed = f
	return func() { f.Close() }, nil
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

// run looks up the input in its steps: start the output, read the input
// into chunks on a goroutine of its own, look the chunks up as they come
// and print them in input order, wait for those still in flight, finish
// the output, and return the batch's outcome. An interrupt stops the
// dispatch of new chunks, and the reading is not waited for; the chunks
// in flight are still waited for and reported.
func (b *batch) run(ctx context.Context, in io.Reader) error {
	b.startOutput()
	chunks, readDone := b.startReading(ctx, in)
	f := newFlight(b)
	f.lookUpAll(ctx, chunks)
	f.drain()
	printErr := b.finishOutput(f.printErr)
	return b.outcome(ctx, readDone, printErr)
}

// startOutput starts the progress bar, when stderr is a terminal, and the
// results table with its header, in text output.
func (b *batch) startOutput() {
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
}

// startReading reads the input into chunks (see read) on a goroutine of
// its own. The chunks channel is closed when the reading ends, after
// readDone received its error (nil when the whole input was read).
func (b *batch) startReading(ctx context.Context, in io.Reader) (chunks <-chan *chunk, readDone <-chan error) {
	out := make(chan *chunk)
	done := make(chan error, 1)
	go func() {
		done <- b.read(ctx, in, out)
		close(out)
	}()
	return out, done
}

// flight looks chunks up, at most the batch's concurrency at a time,
// each on a goroutine of its own, and prints the finished ones in input
// order as soon as the ones before them are. Only the goroutine that
// runs the batch uses it; the lookups hand their chunks back on finished.
type flight struct {
	b        *batch
	finished chan *chunk
	pending  map[int]*chunk // finished chunks not printed yet, by seq
	next     int            // the seq of the next chunk to print
	inflight int            // chunks dispatched and not received yet
	printErr error          // the first error printing a chunk
}

func newFlight(b *batch) *flight {
	return &flight{b: b, finished: make(chan *chunk), pending: map[int]*chunk{}}
}

// lookUpAll dispatches the chunks as they come, while fewer than the
// concurrency are in flight, and receives the finished ones, until the
// chunks end or ctx is done. While the concurrency is reached it takes no
// new chunk (a nil channel is never ready).
func (f *flight) lookUpAll(ctx context.Context, chunks <-chan *chunk) {
	for {
		next := chunks
		if f.inflight == f.b.concurrency {
			next = nil
		}
		select {
		case c, ok := <-next:
			if !ok {
				return
			}
			f.dispatch(ctx, c)
		case c := <-f.finished:
			f.receive(c)
		case <-ctx.Done():
			return
		}
	}
}

// dispatch looks c up on a goroutine of its own, which hands it back on
// finished.
func (f *flight) dispatch(ctx context.Context, c *chunk) {
	f.inflight++
	go func() {
		f.b.lookUp(ctx, c)
		f.finished <- c
	}()
}

// receive takes a finished chunk and prints, in input order, every chunk
// whose predecessors are all printed, keeping the first error.
func (f *flight) receive(c *chunk) {
	f.inflight--
	f.pending[c.seq] = c
	for c, ok := f.pending[f.next]; ok; c, ok = f.pending[f.next] {
		delete(f.pending, f.next)
		f.next++
		if err := f.b.print(c); err != nil && f.printErr == nil {
			f.printErr = err
		}
	}
}

// drain waits for the chunks still in flight, and prints them.
func (f *flight) drain() {
	for f.inflight > 0 {
		f.receive(<-f.finished)
	}
}

// lookUp looks c's addresses up, keeping its results and error, and the
// addresses a partial answer lacks.
func (b *batch) lookUp(ctx context.Context, c *chunk) {
	c.results, c.err = b.client.LookupIPs(ctx, c.addrs)
	var dec *synthient.DecodeError
	if errors.As(c.err, &dec) && len(dec.Missing) > 0 {
		c.missing = dec.Missing
	}
}

// finishOutput flushes the results table and finishes the progress bar.
// It returns printErr, the first error printing a chunk, else the
// table's.
func (b *batch) finishOutput(printErr error) error {
	if b.tbl != nil {
		if err := b.tbl.flush(); err != nil && printErr == nil {
			printErr = err
		}
	}
	if b.bar != nil {
		b.bar.Finish()
	}
	return printErr
}

// outcome is the batch's error, first of: an interrupt (what was not
// looked up is reported above; the reading is not waited for), a failure
// to read the input, a failure to write the output, and the addresses
// that were not looked up (see summary).
func (b *batch) outcome(ctx context.Context, readDone <-chan error, printErr error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := <-readDone; err != nil {
		return err
	}
	if printErr != nil {
		return printErr
	}
	return b.summary()
}

// summary is the error that counts the addresses not looked up: exit 3
// when a chunk failed, else exit 2 when a line is not an address; nil
// when every address was looked up.
func (b *batch) summary() error {
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
// every line that is not an address. It returns when the input ends
// (after the last chunk was sent), when reading it fails, or when ctx is
// done while a chunk waits to be sent.
func (b *batch) read(ctx context.Context, in io.Reader, out chan<- *chunk) error {
	r := &addrReader{b: b, br: bufio.NewReaderSize(in, maxInputLine)}
	cut := &chunker{ctx: ctx, out: out, cur: &chunk{}}
	for {
		ip, ok, err := r.next()
		if ok && !cut.add(ip) {
			return ctx.Err()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the addresses: %w", err)
		}
	}
	if !cut.flush() {
		return ctx.Err()
	}
	return nil
}

// addrReader reads the input line by line, numbering the lines, and
// reports to its batch every line that is not an address.
type addrReader struct {
	b    *batch
	br   *bufio.Reader // of maxInputLine bytes: a longer line does not fit
	line int           // the number of the last line read
}

// next reads a line and returns the address it holds (ok). A line that is
// neither an address, nor blank, nor a # comment is reported. err is nil,
// io.EOF at the end of the input (which may come with a last line without
// a newline), or the reading's error (whatever was read of the line with
// it is dropped).
func (r *addrReader) next() (ip netip.Addr, ok bool, err error) {
	raw, err := r.br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		r.line++
		r.b.reportInvalid(r.line, string(raw), string(raw[:80])+"...")
		return netip.Addr{}, false, r.skipLine()
	case err != nil && err != io.EOF, len(raw) == 0:
		return netip.Addr{}, false, err
	}
	r.line++
	ip, ok = r.parse(raw)
	return ip, ok, err
}

// skipLine skips the rest of a line that does not fit the buffer. It
// returns nil, io.EOF when the input ends with that line, or the reading's
// error.
func (r *addrReader) skipLine() error {
	err := bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		_, err = r.br.ReadSlice('\n')
	}
	return err
}

// parse returns the address that raw, the line just read, holds (ok). A
// byte order mark opening the first line is dropped; a blank line or a #
// comment holds no address, and any other line that is not one, or is an
// address with a zone, is reported.
func (r *addrReader) parse(raw []byte) (netip.Addr, bool) {
	if r.line == 1 {
		raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // a UTF-8 byte order mark
	}
	text, ok := addressText(string(raw))
	if !ok {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(text)
	if err != nil || ip.Zone() != "" {
		r.b.reportInvalid(r.line, text, text)
		return netip.Addr{}, false
	}
	return ip, true
}

// chunker gathers addresses into chunks of at most synthient.MaxBatchSize,
// numbered from 0 in input order, and sends each on out once it is full.
type chunker struct {
	ctx context.Context
	out chan<- *chunk
	seq int    // the number of the chunk being gathered
	cur *chunk // the chunk being gathered
}

// add adds ip to the current chunk and sends the chunk when that fills
// it; false when ctx is done before it could be sent.
func (c *chunker) add(ip netip.Addr) bool {
	c.cur.addrs = append(c.cur.addrs, ip)
	if len(c.cur.addrs) < synthient.MaxBatchSize {
		return true
	}
	return c.send()
}

// flush sends the last chunk, unless it is empty; false when ctx is done
// before it could be sent.
func (c *chunker) flush() bool {
	if len(c.cur.addrs) == 0 {
		return true
	}
	return c.send()
}

// send sends the current chunk and starts the next; false when ctx is
// done first.
func (c *chunker) send() bool {
	select {
	case c.out <- c.cur:
	case <-c.ctx.Done():
		return false
	}
	c.seq++
	c.cur = &chunk{seq: c.seq}
	return true
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
	// The key shapes of this line are redacted here, where it is printed,
	// not added to the secrets every later line is searched for: a file of
	// key-shaped lines would make each line slower to print than the last.
	shown := truncate(redactKeyShapes(b.app.secrets.redactString(text)), 80)
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
