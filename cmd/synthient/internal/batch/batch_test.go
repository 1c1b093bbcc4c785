package batch_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/batch"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// An invalid line's key shapes are redacted where the line is printed, and
// never join the secrets every later line of output is searched for: a file
// of key-shaped lines must not make each line slower to print than the
// last.
func TestBatchInvalidLinesDoNotGrowTheSecrets(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	cfg := &batch.Config{Err: &stderr, Secrets: &redact.Redactor{}}
	for i := range 100 {
		key := fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012x", i, i)
		cfg.ReportInvalid(int64(i+1), "token "+key+key[:20])
		assert.NotContains(t, stderr.String(), key, "line %d printed its key", i+1)
	}
	assert.Zero(t, cfg.Secrets.Count(), "secrets added by invalid lines")
	assert.Equal(t, 100, strings.Count(stderr.String(), redact.Redacted), "redacted keys")
}
