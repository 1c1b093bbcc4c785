package synthienttest

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/synthient-go/synthient/internal/problem"
)

// handleStream answers an opened stream: NDJSON events at the event
// interval, heartbeat blank lines, and a clean close after the lifetime or
// the events cap.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, k *apiKey, p params) {
	if !s.openStream(k) {
		problem.Write(w, problem.Details{Type: errBase + "too-many-streams", Status: http.StatusTooManyRequests,
			Title:    "Too Many Requests",
			Detail:   fmt.Sprintf("Too many concurrent streams for this key (at most %d).", s.cfg.streamLimit),
			Instance: r.URL.Path})
		return
	}
	defer s.closeStream(k)
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || r.Method == http.MethodHead {
		return
	}
	// A stream's number, and so its events, is taken once it sends them.
	g := newEventGen(p.feed, s.streamSeq.Add(1), s.cfg.httpsDetails, s.cfg.seed)
	s.pace(r.Context(), &streamWriter{w: w, rc: rc, gen: g, now: s.now, max: s.cfg.maxEvents})
}

// pace sends a stream's lines: an event at once, then events at the event
// interval and heartbeats at the heartbeat interval, until the client
// goes, the server closes, the lifetime passes, the events cap is reached
// or a write fails.
func (s *Server) pace(ctx context.Context, sw *streamWriter) {
	if !sw.event() {
		return
	}
	life := time.NewTimer(s.cfg.lifetime)
	defer life.Stop()
	beat := time.NewTicker(s.cfg.heartbeat)
	defer beat.Stop()
	tick := time.NewTicker(s.cfg.eventInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-life.C:
			return
		case <-beat.C:
			if !sw.write(nil) {
				return
			}
		case <-tick.C:
			if !sw.event() {
				return
			}
		}
	}
}

// streamWriter writes one stream's lines, each flushed as it is written.
type streamWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	gen  *eventGen
	now  func() time.Time // the server's clock
	max  int              // the events cap; 0 for none
	sent int
}

// event sends the next event; false when the stream ends: the write
// failed or the cap is reached.
func (sw *streamWriter) event() bool {
	line, err := sw.gen.next(sw.now())
	if err != nil || !sw.write(line) {
		return false
	}
	sw.sent++
	return sw.max == 0 || sw.sent < sw.max
}

// write sends line and a newline (a heartbeat when line is empty); false
// when the connection failed.
func (sw *streamWriter) write(line []byte) bool {
	_, err := sw.w.Write(append(line, '\n'))
	return err == nil && sw.rc.Flush() == nil
}

// openStream counts a stream of k; false when k has the most it may.
func (s *Server) openStream(k *apiKey) bool {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if k.streams >= s.cfg.streamLimit {
		return false
	}
	k.streams++
	return true
}

func (s *Server) closeStream(k *apiKey) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	k.streams--
}

// OpenStreams returns how many streams are open, all keys together.
func (s *Server) OpenStreams() int {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	n := 0
	for _, k := range s.keys {
		n += k.streams
	}
	return n
}
