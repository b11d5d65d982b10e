// Package inventory reads the inventory of VACUUM ... USING INVENTORY and turns it into a
// listing of the table: the rows inside the table root, as storage.Object values, walked in the
// order storage.Store.Walk promises. It never deletes; the only file it writes is the listing's
// own temporary file when the rows exceed Options.RowsInMemory (sorted runs merged by Walk,
// released by Listing.Close).
//
// An inventory is a table of files with the columns path (a fully qualified URI, STRING), length
// (an integer), isDir (BOOLEAN) and modificationTime (an integer, milliseconds since the epoch);
// other columns are allowed. It can be read from
//
//   - a Delta table (its live data files, which are Parquet),
//   - a Parquet file or a directory of Parquet files,
//   - a CSV file (or directory of CSV files, optionally gzip-compressed) with a header row,
//   - an Azure Storage blob inventory report (CSV or Parquet, or the rule's manifest file), whose
//     Name, Content-Length, Last-Modified and hdi_isfolder fields are mapped onto the four columns,
//   - an Amazon S3 Inventory report (its manifest.json, naming gzip-compressed CSV or Parquet
//     files), whose Bucket, Key, Size and LastModifiedDate fields are mapped likewise,
//
// or from a query (SELECT * | columns FROM one of those [WHERE condition]) over one of them.
//
// The schema is checked before any row is read; a missing or mistyped column is a *SchemaError
// matching ErrInvalidSchema (Spark's DELTA_INVALID_INVENTORY_SCHEMA).
//
// Inventory paths are Hadoop paths: raw, never percent-decoded. "file:/t/p=a%3Ab/x" names the
// file x in the directory literally called "p=a%3Ab". The table root, on the contrary, is a URI
// (as storage backends' Location returns it) and is decoded once.
//
// The package does not apply the hidden-name rule nor any other VACUUM rule: it reports what the
// inventory says, and the planner decides.
package inventory
