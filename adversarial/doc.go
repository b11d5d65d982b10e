// Package adversarial holds the hostile tests of deltavacuum: tables and worlds built to make a
// VACUUM delete live data or touch what is not the table, run end to end through the command
// line and the library. Every test here failed on some earlier version of the tool, or guards
// a class of attack that did; the unit tests of each rule live beside the rule.
//
// The layout, by class of attack (README.md lists each test):
//
//	hostile_log_test.go   logs written by careless or unusual writers: key case, duplicate keys,
//	                      invalid UTF-8, two actions a line, checkpoints without the columns read
//	spellings_test.go     one file in several spellings (#, ?, %, +, case, NFC/NFD, localhost),
//	                      a version claimed twice, writer features
//	fstraps_test.go       file-system traps: symbolic links, directories swapped for links
//	race_test.go          other writers committing while a vacuum runs (a writer process)
//	wrongtable_test.go    mistyped locations, partition folders, tables nested in tables
//	location_test.go      hosts the user did not name receive no credentials
//	secrets_test.go       secrets planted in every option, URI and environment variable
//	output_test.go        answers that must be clear and right: messages, figures, names
//	review_test.go        what the internal review of the deletion paths found
//
// The package has no code of its own: it only tests. Tests work in temporary directories and
// against the test servers on loopback, never anywhere else.
package adversarial
