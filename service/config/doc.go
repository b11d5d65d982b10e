// Package config parses and validates maintenance.yaml, the configuration of `deltavacuum
// serve`: where the service listens, where it keeps its state, and each table's maintenance
// policy and schedule.
//
// It is strict, as a file that decides what is deleted must be: an unknown key, a duplicate
// key, a value of the wrong type, an alias, or a second YAML document is an error naming its
// line. A secret is never written in the file: the token and every storage option are
// references to environment variables (${NAME}), resolved when the service starts. Parsing
// does no I/O beyond reading the file: it never opens a table, a catalog or a store.
package config
