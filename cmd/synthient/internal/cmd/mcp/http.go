package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// HTTP: the go-sdk's streamable handler serves /mcp, and refuses by itself
// a request that arrived on a loopback address with a Host that is not
// loopback (its localhost protection, kept on). Around it: the bearer
// token of --token-file (auth.RequireBearerToken, compared in constant
// time), and hostGuard, which checks the Origin of every request and the
// Host of those that did not arrive on loopback.

const (
	// minTokenLen is the shortest bearer token taken.
	minTokenLen = 16
	// sessionTimeout closes a session idle this long.
	sessionTimeout = 30 * time.Minute
	// shutdownWait is how long an interrupt waits for the calls in flight:
	// well within the 3 s the command has after the signal before the
	// process exits 130 all the same (main.go, interruptGrace), so that the
	// server closes its sessions and reports itself.
	shutdownWait = time.Second
)

// serveHTTP serves srv's streamable HTTP at /mcp on --http until ctx
// ends. token, when not empty, is the bearer token every request must
// send; an address off loopback needs one.
func serveHTTP(ctx context.Context, srv *gomcp.Server, o *Options, token string) error {
	addr, loopback, name, err := listenAddr(o.HTTP)
	if err != nil {
		return err
	}
	if !loopback && token == "" {
		return clierr.Usagef("--http %s is not a loopback address: serving it needs --token-file, a bearer token every request must send", o.HTTP)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return clierr.Usagef("cannot listen on %s: %v", o.HTTP, err)
	}
	var h http.Handler = gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv },
		&gomcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout})
	if token != "" {
		h = auth.RequireBearerToken(tokenVerifier(token), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	}
	g := &hostGuard{names: map[string]bool{}, next: h}
	for _, n := range append(o.AllowHosts, name) {
		if n != "" {
			g.names[strings.ToLower(n)] = true
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	o.logf("serving MCP at http://%s/mcp", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	for ss := range srv.Sessions() {
		_ = ss.Close() // ends its stream of server messages, which Shutdown would wait for
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close() // the streams still open: nothing to report
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// listenAddr returns the address to listen on for --http addr, whether it
// is on loopback, and its host name when it names one. An address without
// a host (:8080, or 8080) listens on 127.0.0.1; localhost and loopback
// addresses are loopback; any other, 0.0.0.0 and a name included, is not.
func listenAddr(addr string) (listen string, loopback bool, name string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, nerr := strconv.ParseUint(addr, 10, 16); nerr != nil {
			return "", false, "", clierr.Usagef("--http %q is not an address: give HOST:PORT, :PORT or PORT", addr)
		}
		host, port = "", addr
	}
	switch ip, perr := netip.ParseAddr(host); {
	case host == "":
		return net.JoinHostPort("127.0.0.1", port), true, "", nil
	case host == "localhost":
		return net.JoinHostPort(host, port), true, "", nil
	case perr == nil:
		return net.JoinHostPort(host, port), ip.IsLoopback(), "", nil
	}
	return net.JoinHostPort(host, port), false, host, nil
}

// readToken reads the bearer token of --token-file name: one word of at
// least minTokenLen characters.
func readToken(ctx context.Context, name string) (string, error) {
	f, err := os.Open(name) //nolint:gosec // the file the user named: reading it is the point
	if err != nil {
		return "", clierr.Usagef("--token-file: %v", err)
	}
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	token, err := config.ReadKey(ctx, f, "--token-file", name)
	if err != nil {
		return "", err
	}
	if len(token) < minTokenLen {
		return "", clierr.Usagef("--token-file: %s holds a token of %d characters: give one of %d or more (such as 32 random bytes in hex)", name, len(token), minTokenLen)
	}
	return token, nil
}

// tokenVerifier accepts token and nothing else, in constant time (over
// the SHA-256 of each, so that the time does not tell the length).
func tokenVerifier(token string) auth.TokenVerifier {
	want := sha256.Sum256([]byte(token))
	return func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "token-file"}, nil
	}
}

// hostGuard refuses, with 403, a request whose Origin (when it has one)
// is not the server's, or whose Host is not the server's when it did not
// arrive on loopback (the go-sdk's handler checks those): a page of
// another site, or one that rebound its name to this address, cannot
// call the tools.
type hostGuard struct {
	names map[string]bool // --allow-host, and the name of --http
	next  http.Handler
}

func (g *hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	local := localAddr(r)
	if !local.IsLoopback() && !g.allowed(hostname(r.Host), local) {
		http.Error(w, "Forbidden: invalid Host header "+strconv.Quote(r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.allowedOrigin(origin, local) {
		http.Error(w, "Forbidden: invalid Origin header "+strconv.Quote(origin), http.StatusForbidden)
		return
	}
	g.next.ServeHTTP(w, r)
}

// allowed reports whether host names the server, reached at local: a
// name of g; on loopback, localhost or a loopback address; else the
// address itself.
func (g *hostGuard) allowed(host string, local netip.Addr) bool {
	if g.names[strings.ToLower(host)] {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if local.IsLoopback() {
		return strings.EqualFold(host, "localhost") || err == nil && ip.IsLoopback()
	}
	return err == nil && local.IsValid() && ip.Unmap() == local.Unmap()
}

// allowedOrigin reports whether origin (scheme://host[:port]) is the
// server's; "null" and anything else that names no host is not.
func (g *hostGuard) allowedOrigin(origin string, local netip.Addr) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Hostname() != "" && g.allowed(u.Hostname(), local)
}

// hostname is hostport's host, without a port or brackets.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// localAddr is the address the request arrived on; the zero Addr when it
// is not known.
func localAddr(r *http.Request) netip.Addr {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
