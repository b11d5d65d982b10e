// Package spill keeps the records that do not fit in a budget of memory in one temporary file
// and gives them back as written: in order, or, when they were written as sorted runs, merged
// k-way with the records still in memory, the records of one key folded into one. A plan's
// files to delete (vacuum.FileList) and an inventory's rows (inventory.Listing) spill through
// it.
//
// A File is a sequence of runs, each the records of one Append; a run is blocks of about
// BlockSize bytes. Within a block each record's key is compressed against the previous one's,
// and the rest of the record is the Codec's. The length, the number of records and the CRC-32C
// of every block are kept in memory, not in the file: a block is checked before any of its
// records is decoded, so a file changed or cut short after it was written is an error (a
// Fault, which the caller phrases), never other records; and a damaged file never makes a
// reader allocate more than the longest block written.
//
// The package must never give back a record of a block that does not read back as written,
// and it imports nothing of this module: the caller creates the temporary file
// (internal/tempfile) and says what each failure means to its user.
package spill
