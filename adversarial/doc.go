// Package adversarial holds the hostile tests of deltavacuum: tables and worlds built to make a
// VACUUM delete live data or touch what is not the table, run end to end through the command
// line and the library. Every test here failed on some earlier version of the tool, or guards
// a class of attack that did; the unit tests of each rule live beside the rule.
//
// The layout, by class of attack (README.md lists each test):
//
//	hostile_log_test.go   logs written by careless or unusual writers: key case, duplicate keys,
//	                      invalid UTF-8, two actions a line, checkpoints without the columns read
//	checkpoint_test.go    checkpoints that are not the table's state: empty, cut, a part claimed
//	                      twice, without protocol and metaData, older than deletion vectors
//	spellings_test.go     one file in several spellings (#, ?, %, +, case, NFC/NFD, localhost),
//	                      a version claimed twice or in 21 digits, writer features, one table
//	                      root in several spellings (a link above it, az://, https://, Blob hosts)
//	retention_test.go     the retention and the properties that set it: overflow, ALTER TABLE
//	fstraps_test.go       file-system traps: symbolic links, directories swapped for links
//	wrongtable_test.go    mistyped locations, partition folders, tables nested in tables
//	lite_test.go          what LITE deletes without listing: a link, a file written again
//	inventory_test.go     what an inventory does not say: a link, a nested table filtered out
//	recheck_test.go       commits made while the deletes run: the re-check must see them
//	checksum_test.go      a live file named like a checksum companion is not one
//	storenames_test.go    object stores' odd names: keys a request rewrites or escapes
//	race_test.go          other writers committing while a vacuum runs (a writer process)
//	lock_test.go          two runs of one table at once, runs killed at random moments
//	trash_test.go         the trash folder: partition folders, planted records, a file
//	location_test.go      hosts the user did not name receive no credentials
//	secrets_test.go       secrets planted in every option, URI and environment variable
//	sql_test.go           the SQL front end reads a statement as Spark does
//	output_test.go        answers that must be clear and right: messages, figures, names
//
// The package has no code of its own: it only tests. Tests work in temporary directories and
// against the test servers on loopback, never anywhere else.
package adversarial
