// Package converted says whether a Delta table's log is a translation of a table of another
// format (OneLake's virtual Delta log over an Iceberg shortcut, Apache XTable's sync of an
// Iceberg, Hudi or Paimon table into Delta), which engine owns the data files, and where to
// vacuum it instead. It reads through storage.Store and the Delta snapshot; it never decides
// what is deleted and never writes.
//
// # Evidence
//
//   - OneLake (Microsoft Fabric, "Use Iceberg tables with OneLake", the troubleshooting
//     section): a shortcut to an Iceberg table under Tables gets a virtual _delta_log/ that
//     holds latest_conversion_log.txt beside the commits, "the latest attempted conversion's
//     success or failure details". Its presence is the mark; its content has no published
//     format and is not read.
//   - Apache XTable (apache/incubator-xtable: DeltaConversionTarget, DeltaKernelConversionTarget,
//     TableSyncMetadata): a Delta table XTable writes as a target has XTABLE_METADATA in its
//     metaData.configuration, a JSON object whose sourceTableFormat names the source format
//     (ICEBERG, HUDI, ...); each commit also carries it in commitInfo.tags and is an UPDATE
//     whose predicate is "xtable-delta-sync". The configuration is what this package reads:
//     it is in every snapshot, checkpoints included.
//
// Fabric's Delta-to-Iceberg direction (Iceberg metadata beside a real Delta log) is not a
// conversion of the log: package iceberg reads that.
package converted
