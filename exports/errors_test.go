package exports_test

// Tests of errors.go: the errors' texts and what they wrap.

import (
	"fmt"
	"io"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/exports"
)

func TestErrorTexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{&exports.FormatError{Err: io.ErrUnexpectedEOF}, "exports: not a readable Parquet file: unexpected EOF"},
		{&exports.FormatError{Name: "p.parquet", Err: fs.ErrClosed}, "exports: p.parquet: not a readable Parquet file: file already closed"},
		{&exports.ColumnError{Column: "asn", Want: "int32"}, `exports: the file has no column "asn" (int32)`},
		{&exports.ColumnError{Name: "p.parquet", Column: "asn", Want: "int32", Got: "double"}, `exports: p.parquet: column "asn" is double, not int32`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
}

// Both are found with errors.As through wrapping; a *FormatError unwraps
// to its cause.
func TestErrorsAs(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("loading: %w", &exports.FormatError{Err: fs.ErrClosed})
	var fe *exports.FormatError
	require.ErrorAs(t, wrapped, &fe)
	require.ErrorIs(t, wrapped, fs.ErrClosed)

	wrapped = fmt.Errorf("loading: %w", &exports.ColumnError{Column: "ip", Want: "string"})
	var ce *exports.ColumnError
	require.ErrorAs(t, wrapped, &ce)
	assert.Equal(t, "ip", ce.Column)
	assert.NotErrorAs(t, wrapped, &fe, "a *ColumnError is a *FormatError")
}
