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
// # Errors, memory and concurrency
//
// A file that is not a readable Parquet file (truncated, corrupt, not
// Parquet) is a *FormatError: from Open or NewFile when its footer cannot
// be read, else yielded by a sequence when a page cannot be, after the
// rows before it. A corrupt file never panics: a panic of the decoder
// becomes a *FormatError too. A sequence yields at most one error, and
// then ends.
//
// A sequence decodes 1,024 rows at a time and holds, per column it reads,
// the page being decoded: its memory does not grow with the file (see
// docs/performance.md). Breaking out of a loop stops the reading; each loop
// over a sequence reads from the first row. A File may be read by several
// loops at once. Reading takes no context: the file is local, and a loop
// stops when it breaks.
//
// One limit comes from the decoder (parquet-go): a corrupt page header
// announces the page's sizes, up to 2 GiB, and the decoder allocates that
// much before it finds the file too short, which a long fuzzing run turns
// into gigabytes of memory. A footer that announces more than the file
// holds is refused before any such allocation. On some damaged pages the
// decoder also prints a warning of its own ("parquet: warning: ...")
// straight to the process's stderr, before the *FormatError.
package exports
