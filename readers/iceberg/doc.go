// Package iceberg finds the Iceberg metadata that converters write inside a Delta table's
// folder (Delta UniForm, Apache XTable, Fabric's Delta-to-Iceberg virtualization, Snowflake) and
// says what that Iceberg view needs: its current snapshot, the Delta version it was converted
// from where the converter records one, the data files its manifests name, and the metadata
// files themselves. It never decides what is deleted and never writes: it reads through
// storage.Store, and the planner (package vacuum) turns what it reports into protection.
//
// # Recognition
//
// A folder holds Iceberg metadata when one of its files named *.metadata.json parses as an
// Iceberg table metadata file (format-version 1, 2 or 3, a location, last-updated-ms, a schema,
// valid snapshots; table-uuid from version 2 on). A name alone proves nothing: a hostile or
// unrelated x.metadata.json is ignored, and reported in Table.Ignored with the reason.
//
// # The current metadata file
//
// Following Iceberg's Java HadoopTableOperations (which pyiceberg's StaticTable and
// iceberg-go's Hadoop catalog follow for the hint's content):
//   - version-hint.text, when present and readable, names a version N (v<N>.metadata.json or
//     v<N>.gz.metadata.json), or a file name (pyiceberg: "x.metadata.json", or "x" for
//     x.metadata.json). A hint that names a file that is missing or not Iceberg is an error
//     (ErrUnreadable): Java readers fail the same way. From N, newer consecutive versions
//     (N+1, N+2, ...) are taken, as Java does: a writer writes the new metadata file before
//     the hint. A hint that is not a number nor a file name is ignored, as Java ignores it.
//   - Without a usable hint, the file with the highest version in its name:
//     v<N>.metadata.json (Hadoop tables, XTable), v<N>-<uuid>.metadata.json (Delta UniForm),
//     <N>-<uuid>.metadata.json (Java and Python catalogs, Snowflake), <N>.metadata.json (the
//     shape Fabric's documentation shows). Two files of one version: the one with the later
//     last-updated-ms; the same time and another state is an error (ErrUnreadable).
//   - A newest-named file that is not valid Iceberg while older ones are is an error
//     (ErrUnreadable): the current view cannot be read, so nothing may be removed blindly.
//
// # What is an error
//
// Not Iceberg (Find returns nil, nil): no metadata folder, or no file in it that parses as
// Iceberg metadata. Iceberg but unreadable (an error matching ErrUnreadable, which the caller
// turns into a refusal): the current metadata file cannot be chosen or read, its current
// snapshot's manifest list is missing, outside the table or not Avro (Find), a manifest of the
// current snapshot is missing or not Avro (DataFiles), a path in them cannot be read as a path
// (a '..' component, a control character), a file larger than the limits. Every error names
// the file and says what to do. An older snapshot's missing manifest list is only reported
// (Table.Missing): Iceberg readers fail only when they travel back to it.
//
// # Cost
//
// Find lists the metadata folders and reads every *.metadata.json in them (so that each is
// recognised by its content; converters that clean up keep about a hundred), and the manifest
// list of every snapshot of the current file (for the manifests to keep). DataFiles reads the
// current snapshot's manifests, one at a time, block by block.
package iceberg
