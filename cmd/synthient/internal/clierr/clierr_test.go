package clierr_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
)

// A file error of a download that made no attempt (its temporary file
// could not be created: a read-only file system, a full disk) is a usage
// error, exit 2; one that came later, after bytes were sent, keeps exit 1.
func TestExitCodeFileErrors(t *testing.T) {
	t.Parallel()
	pathErr := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "open", Path: "/ro/f.parquet.1.part", Err: errno}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"read-only file system, nothing sent",
			&synthient.Error{Op: "DownloadExportFile", Message: "creating the file", Err: pathErr(syscall.EROFS)}, clierr.Usage},
		{"no space to create, nothing sent",
			&synthient.Error{Op: "DownloadExportFile", Message: "creating the file", Err: pathErr(syscall.ENOSPC)}, clierr.Usage},
		{"no space while writing",
			&synthient.Error{Op: "DownloadExportFile", Attempts: 2, Message: "writing the file", Err: pathErr(syscall.ENOSPC)}, clierr.Failure},
		{"a file error without the SDK's", fmt.Errorf("reading the addresses: %w", pathErr(syscall.EIO)), clierr.Failure},
		{"a missing input file", fmt.Errorf("--file: %w", &fs.PathError{Op: "open", Path: "in.txt", Err: fs.ErrNotExist}), clierr.Usage},
		{"a file that appeared during the download",
			&synthient.Error{Op: "DownloadExportFile", Attempts: 3, Message: "out.parquet appeared during the download", Err: fs.ErrExist}, clierr.Failure},
		{"a TLS failure whose text says received",
			&synthient.ConnectionError{Err: errors.New("tls: received unexpected handshake message")}, clierr.Connection},
		{"a lookup the credit budget refused (--max-credits)",
			&synthient.ConnectionError{NotSent: true, Err: fmt.Errorf("%w: 1 credit needed, 0 left of 0", synthient.ErrCreditBudget)}, clierr.API},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, clierr.ExitCode(tt.err), "clierr.ExitCode(%v)", tt.err)
		})
	}
}
