// Package parquetguard opens Parquet files that may be damaged or hostile without letting them
// exhaust memory or crash the process. Both Parquet readers of deltavacuum use it: deltalog's
// checkpoint reader and inventory's reader of inventory files.
//
// parquet-go trusts the sizes a file claims: it allocates a footer, a thrift list, a page or a
// decompressed page of the size written in the file before reading it, and some of its
// decoders read a stream to its end or retry with ever larger buffers. A Source therefore
// fetches the footer and the needed column chunks of a row group itself, within the file's
// size, and checks them (a walk of the thrift structures, the page headers' sizes and counts,
// a bound on what each page decompresses to) before parquet-go parses them; parquet-go's reads
// are then served from memory. A column chunk too large to hold (more than 64 MiB: a report
// written as one row group of gigabytes) is instead read forward in windows of about 4 MiB as
// parquet-go goes through it, and each page is checked, in the same way, before parquet-go sees
// any of its bytes; memory then grows with a page, not with the row group. Checks parquet-go
// makes itself (negative sizes and counts in page headers, CRCs) are left to it.
//
// It must never decide what a file means: it only refuses files that cannot be read safely,
// with a CorruptError, and reports the store's own failures as ReadError.
package parquetguard
