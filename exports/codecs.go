package exports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// The pages of a file are decompressed here, not by parquet-go: into a
// buffer of exactly the size the page header gives, which the limit has
// bounded first, so that no codec sizes its output from the compressed
// data (parquet-go's LZ4_RAW codec does, and drops what it decoded when
// the guess misses: parquet-go issue 608), and a page that decompresses
// to another size than its header says is refused, never read short or
// long.

// codecName names a compression codec as the Parquet format does.
func codecName(c format.CompressionCodec) string {
	switch c {
	case format.Uncompressed:
		return "UNCOMPRESSED"
	case format.Snappy:
		return "SNAPPY"
	case format.Gzip:
		return "GZIP"
	case format.LZO:
		return "LZO"
	case format.Brotli:
		return "BROTLI"
	case format.Lz4:
		return "LZ4"
	case format.Zstd:
		return "ZSTD"
	case format.Lz4Raw:
		return "LZ4_RAW"
	}
	return fmt.Sprintf("codec %d", int32(c))
}

// readable reports a codec that decompress reads. LZO and the deprecated
// LZ4 (Hadoop's framing, which writers have stopped writing for LZ4_RAW)
// are not.
func readable(c format.CompressionCodec) bool {
	switch c {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
		return true
	}
	return false
}

// decompress decompresses src, of codec c, into dst, which has the length
// the page header gives: it fails unless src decompresses to exactly
// len(dst) bytes.
func decompress(c format.CompressionCodec, dst, src []byte) error {
	switch c {
	case format.Uncompressed:
		if len(src) != len(dst) {
			return fmt.Errorf("%d bytes, not the %d of an uncompressed page", len(src), len(dst))
		}
		copy(dst, src)
		return nil
	case format.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return err
		}
		if n != len(dst) {
			return sizeError(n, len(dst))
		}
		_, err = snappy.Decode(dst, src)
		return err
	case format.Lz4Raw:
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			return fmt.Errorf("not LZ4 data of at most %d bytes: %w", len(dst), err)
		}
		if n != len(dst) {
			return sizeError(n, len(dst))
		}
		return nil
	case format.Zstd:
		out, err := zstdDecoder().DecodeAll(src, dst[:0])
		if err != nil {
			return err
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return sizeError(len(out), len(dst))
		}
		return nil
	case format.Gzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return err
		}
		return readExactly(r, dst)
	case format.Brotli:
		return readExactly(brotli.NewReader(bytes.NewReader(src)), dst)
	}
	return errors.New("a codec this reader does not read")
}

func sizeError(got, want int) error {
	return fmt.Errorf("the data decompresses to %d bytes, not the %d its page header gives", got, want)
}

// readExactly fills dst from r and checks that r ends there.
func readExactly(r io.Reader, dst []byte) error {
	n, err := io.ReadFull(r, dst)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return sizeError(n, len(dst))
	case err != nil:
		return err
	}
	var one [1]byte
	for {
		k, err := r.Read(one[:])
		switch {
		case k > 0:
			return fmt.Errorf("the data decompresses to more than the %d bytes its page header gives", len(dst))
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}

// zstdDecoder is the decoder of every ZSTD page. DecodeAll may be called
// concurrently; with a cap limit it never grows the buffer it is given,
// and it starts no goroutine.
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(1<<31))
	if err != nil {
		panic(err) // only for invalid options
	}
	return d
})
