package shape_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/shape"
)

// Numbers reach a template as int64 when they are integers that fit,
// float64 when they have a fraction or an exponent, else as written.
func TestTemplateNumbers(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"i":42,"neg":-7,"f":1.5,"e":2e3,"big":123456789012345678901234567890,"list":[1,2.5]}`)
	v, err := shape.DecodeDocument(doc)
	require.NoError(t, err)
	got := shape.TemplateNumbers(v).(map[string]any)
	assert.Equal(t, int64(42), got["i"])
	assert.Equal(t, int64(-7), got["neg"])
	// The type is the point (float64, not int64), and the values are exact.
	assert.Equal(t, 1.5, got["f"])    //nolint:testifylint // see above
	assert.Equal(t, 2000.0, got["e"]) //nolint:testifylint // see above
	assert.Equal(t, json.Number("123456789012345678901234567890"), got["big"])
	assert.Equal(t, []any{int64(1), 2.5}, got["list"])
}
