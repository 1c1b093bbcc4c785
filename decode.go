package synthient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxJSONBody bounds a success body that is decoded in memory; a batch of
// 1000 full results is well under a megabyte.
const maxJSONBody = 32 << 20

// getJSON sends op and decodes its 2xx JSON body into out. m describes
// the call, for errors the caller finds in out.
func (c *Client) getJSON(ctx context.Context, op *operation, out any) (m meta, err error) {
	resp, m, err := c.do(ctx, op)
	if err != nil {
		return m, err
	}
	err = decodeJSON(ctx, resp, m, out)
	c.closeIdleIfClosed()
	return m, err
}

// decodeJSON reads a success body (never retried: a failure while reading
// is a *ConnectionError or *TimeoutError, a body that does not decode a
// *DecodeError) and closes it.
func decodeJSON(ctx context.Context, resp *http.Response, m meta, out any) error {
	defer resp.Body.Close() //nolint:errcheck // read to the end or given up: its Close says nothing of the answer
	body, err := readBody(resp)
	if err != nil {
		return readError(ctx, m, err)
	}
	switch {
	case len(body) > maxJSONBody:
		return decodeError(m, resp.StatusCode, fmt.Errorf("body is larger than %d bytes", maxJSONBody))
	case len(body) == 0:
		return decodeError(m, resp.StatusCode, errors.New("empty body"))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return decodeError(m, resp.StatusCode, err)
	}
	return nil
}

// readBody reads a success body, at most maxJSONBody+1 bytes of it: into
// one buffer of its Content-Length when it has one (net/http ends the body
// there), else as it comes.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= maxJSONBody {
		body := make([]byte, n)
		_, err := io.ReadFull(resp.Body, body)
		return body, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxJSONBody+1))
}
