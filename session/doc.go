// Package session runs the SQL front end of deltavacuum over the library: a session holds the
// Spark settings (SET), resolves table names through a warehouse or catalog, and runs VACUUM,
// INSPECT, EXPLAIN, ALTER TABLE and DESCRIBE statements, turning each request into the options
// of the library's operations (deltavacuum.VacuumOptions, insight). The command line and the
// maintenance service both use it; the library below knows nothing of it.
package session
