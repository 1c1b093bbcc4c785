// Package exports reads the Parquet export files of the Synthient API, as
// synthient.Client.DownloadExportFile writes them, or from any
// io.ReaderAt. It is apart from package synthient so that a program that
// only calls the API does not build in the Parquet library
// (github.com/parquet-go/parquet-go).
//
//	f, err := exports.Open("proxies.parquet")
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	for row, err := range f.Proxies() {
//		if err != nil {
//			return err
//		}
//		fmt.Println(row.IP, row.Provider, row.Type)
//	}
//
// # Typed rows
//
// Each feed has a row type (ProxyRow, AnonymizerRow, TorrentRow,
// HoneypotHTTPRow, HoneypotHTTPSRow, HoneypotDNSRow, HoneypotADBRow,
// JA4TRow) and a method of File that yields its rows in the file's order
// (File.Proxies, File.Anonymizers, ...). A sequence binds the row's
// fields to the file's columns by name: the columns may come in any
// order, columns the row does not know are not read, a null reads as the
// zero value (nil for a []byte field), and an int64 field reads an int32
// column too. A column the row needs that the file lacks, or has with a
// type the field cannot hold, is a *ColumnError, yielded alone before any
// row.
//
// # Untyped rows
//
// File.Rows yields every column of any Parquet file, as Go values with
// the column names (Row): what a newer file adds is there too. File.Columns
// describes the columns, with their types named as the export meta names
// them.
//
// # What is read
//
// Any Parquet writer's file is read, as DuckDB, Apache Arrow and
// parquet-go write them: pages compressed UNCOMPRESSED, SNAPPY, GZIP, ZSTD,
// LZ4_RAW or BROTLI, V1 and V2 data pages, dictionary pages, and the
// encodings PLAIN, RLE_DICTIONARY (PLAIN_DICTIONARY), RLE,
// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and
// BYTE_STREAM_SPLIT. The pages are decompressed by this package, not by
// parquet-go, into a buffer of the size the page header gives, and a page
// that decompresses to another size is refused; DELTA_BINARY_PACKED pages
// of INT32 columns are decoded in 64-bit arithmetic, which reads both the
// deltas that wrap around in 32 bits (Arrow, parquet-go) and those that
// writers such as DuckDB compute in 64 bits. A column chunk compressed
// with LZO or the deprecated LZ4 (Hadoop's framing; writers write LZ4_RAW
// instead), encrypted, or kept in another file, is refused with a
// *FormatError that names the column and the codec.
//
// # Errors, memory and concurrency
//
// A file that is not a readable Parquet file (truncated, corrupt, not
// Parquet, or a page this package refuses) is a *FormatError: from Open
// or NewFile when its footer cannot be read, else yielded by a sequence
// when a page cannot be, after the rows before it; its text names the
// column, the codec and the page's offset. A corrupt file never panics: a
// panic of the decoder becomes a *FormatError too. A sequence yields at
// most one error, and then ends.
//
// What a file claims is checked against the bytes it has before anything
// is allocated for it: the footer's length and every list in it, each
// row group's rows and column chunks, each page's sizes and value counts,
// a dictionary's values, and the run lengths, value counts and value
// lengths inside the encoded data. A page is also bounded by a limit,
// DefaultMaxPageSize (256 MiB) unless WithMaxPageSize sets another: its
// uncompressed size, the memory its values decode into and its header
// must each fit, or the page is a *FormatError. So a sequence holds, per
// column it reads, about three times the largest page it meets (the page
// read, decompressed, and parquet-go's copy) and its decoded values,
// however large the file and whatever its pages claim; the footer decodes
// into at most a few hundred times its length. On some damaged pages
// parquet-go prints a warning of its own ("parquet: warning: ...")
// straight to the process's stderr, before the *FormatError.
//
// A sequence decodes 1,024 rows at a time (see docs/performance.md).
// Breaking out of a loop stops the reading; each loop over a sequence
// reads from the first row. A File may be read by several loops at once.
// Reading takes no context: the file is local, and a loop stops when it
// breaks.
package exports
