package synthienttest

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient"
)

// Server is a fake of the Synthient API v4 and of its export storage host,
// each on its own loopback origin. Create one with NewServer and Close it
// when done. Its methods are safe for concurrent use.
type Server struct {
	// URL is the API's base URL including /api/v4, for synthient.WithBaseURL.
	URL string
	// StorageURL is the origin of the storage host that download redirects
	// point to (no trailing slash).
	StorageURL string
	// APIKey is a valid key with every scope and DefaultCredits credits
	// (see WithCredits).
	APIKey string

	cfg    config
	secret []byte // signs presigned URLs and cursors
	done   chan struct{}

	apiSrv, storageSrv *http.Server
	serving            sync.WaitGroup // the Serve goroutines

	hmu      sync.Mutex // guards closed and the Add of handlers
	closed   bool
	handlers sync.WaitGroup
	conns    sync.WaitGroup // open connections, both origins

	mu       sync.Mutex // guards faults, arrivals, log, unhealthy, charged
	faults   map[string][]*pendingFault
	arrivals map[string]int
	log      []*Request
	sick     []string
	charged  []netip.Addr // every address a lookup charged for, in order

	reqSeq    atomic.Uint64
	streamSeq atomic.Uint64

	keysMu sync.Mutex // guards keys and everything in an apiKey
	keys   map[string]*apiKey
	keyN   int
}

// NewServer starts the fake API and its storage host on 127.0.0.1, each on
// a random port. It panics if it cannot listen; Start returns the error.
func NewServer(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(err.Error())
	}
	return s
}

// Start is NewServer, returning an error when it cannot listen (for
// example on a WithListenAddr address already in use).
func Start(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := &Server{
		cfg:      cfg,
		secret:   make([]byte, 32),
		done:     make(chan struct{}),
		faults:   map[string][]*pendingFault{},
		arrivals: map[string]int{},
		keys:     map[string]*apiKey{},
	}
	if _, err := rand.Read(s.secret); err != nil {
		return nil, fmt.Errorf("synthienttest: %w", err)
	}
	s.APIKey = s.addKey(AllScopes(), cfg.credits, "synthienttest")

	apiAddr := cfg.listenAddr
	if apiAddr == "" {
		apiAddr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	apiLn, err := lc.Listen(context.Background(), "tcp", apiAddr)
	if err != nil {
		return nil, fmt.Errorf("synthienttest: listening on %s: %w", apiAddr, err)
	}
	stLn, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		_ = apiLn.Close() // the error to report is the listen's
		return nil, fmt.Errorf("synthienttest: listening on loopback: %w", err)
	}
	s.URL = "http://" + apiLn.Addr().String() + "/api/v4"
	s.StorageURL = "http://" + stLn.Addr().String()
	s.apiSrv = s.newHTTPServer(http.HandlerFunc(s.serveAPI))
	s.storageSrv = s.newHTTPServer(http.HandlerFunc(s.serveStorage))
	s.serving.Add(2)
	go func() { defer s.serving.Done(); _ = s.apiSrv.Serve(apiLn) }()
	go func() { defer s.serving.Done(); _ = s.storageSrv.Serve(stLn) }()
	return s, nil
}

// NewClient returns a client of the fake's API: it sends Server.APIKey to
// Server.URL. The options apply after those two, so a caller's option
// (another WithBaseURL, say) wins. NewClient returns the error of an
// invalid option, as synthient.NewClient does. The caller should Close the
// client when done with it.
func (s *Server) NewClient(opts ...synthient.Option) (*synthient.Client, error) {
	return synthient.NewClient(s.APIKey, append([]synthient.Option{synthient.WithBaseURL(s.URL)}, opts...)...)
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				s.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.conns.Done()
			}
		},
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
}

// Close shuts both origins down: it ends open streams and injected waits,
// closes every connection and returns when every handler has returned.
// Calling it again does nothing.
func (s *Server) Close() {
	s.hmu.Lock()
	if s.closed {
		s.hmu.Unlock()
		return
	}
	s.closed = true
	s.hmu.Unlock()
	close(s.done)
	_ = s.apiSrv.Close()
	_ = s.storageSrv.Close()
	s.handlers.Wait()
	s.serving.Wait()
	waitTimeout(&s.conns, 5*time.Second)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// enter registers a running handler; false once the server is closed.
func (s *Server) enter() bool {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// refuse answers a request that arrived while the server closes.
func (s *Server) refuse(w http.ResponseWriter) {
	w.Header().Set("X-Request-Id", s.requestID())
	w.Header().Set("Connection", "close")
	http.Error(w, "server closed", http.StatusServiceUnavailable)
}
