package synthient_test

// Tests of decode.go: a 2xx body that does not decode.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// TestDecodeErrorIsNeverRetried checks that a 2xx body that does not
// match the schema gives a *DecodeError after one request, for every
// operation (Account included, although it retries 5xx).
func TestDecodeErrorIsNeverRetried(t *testing.T) {
	t.Parallel()
	wrongTypes := map[string]string{
		"LookupIP":     `{"ip":12,"network":"none"}`,
		"LookupIPs":    `{"results":{"ip":"1.2.3.4"}}`,
		"LookupDomain": `{"domain":7,"stats":[]}`,
		"Health":       `{"status":true}`,
		"Account":      `{"email":5,"scopes":"BASIC"}`,
	}
	for _, op := range operations() {
		bodies := []struct{ name, body string }{
			{"invalid_json", `{"ip": "1.2.3.4",`},
			{"empty_body", ""},
			{"wrong_types", wrongTypes[op.name]},
			{"json_array", `[]`},
			{"json_null", `null`},
			{"empty_object", `{}`},
		}
		for _, b := range bodies {
			t.Run(op.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				m := newOpMock(t, op, answer(200, b.body, "Content-Type", "application/json"), opSucceeds)
				err := op.call(context.Background(), m.Client(t))
				var de *synthient.DecodeError
				require.ErrorAs(t, err, &de)
				assert.Equal(t, 200, de.Status, "DecodeError.Status")
				assert.Equal(t, 1, m.GetTotalCallCount(), "requests: a decoding failure is never retried")
				var base *synthient.Error
				require.ErrorAs(t, err, &base)
				assert.Equal(t, op.name, base.Op, "Error.Op")
				assert.Equal(t, 1, base.Attempts, "Error.Attempts")
			})
		}
	}
}
