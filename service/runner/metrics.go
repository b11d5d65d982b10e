package runner

import "github.com/prometheus/client_golang/prometheus"

// The runner's Prometheus metrics (the service's registry serves them at GET /metrics, beside
// discovery's and the webhook's): its runs, counted at their end from their run records, and
// the scheduler's misfires.

// runMetrics are the runner's metrics.
type runMetrics struct {
	runs         *prometheus.CounterVec
	inProgress   prometheus.Gauge
	deletedFiles *prometheus.CounterVec
	deletedBytes *prometheus.CounterVec
	reclaimable  *prometheus.GaugeVec
	staleRecords *prometheus.CounterVec
	purgedFiles  *prometheus.CounterVec
	// The writers' health (runner_untracked.go): the untracked files of each table's last run
	// that listed the table, and the runs that found more of them than the run before.
	untrackedFiles *prometheus.GaugeVec
	untrackedBytes *prometheus.GaugeVec
	untrackedGrew  *prometheus.CounterVec
}

func newRunMetrics(reg prometheus.Registerer) *runMetrics {
	m := &runMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_runs_total", Help: "Runs ended, by table, trigger (schedule, api) and status (COMPLETED, FAILED: their run records' status; FAILED for a run refused before it wrote one).",
		}, []string{"table", "trigger", "status"}),
		inProgress: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "deltavacuum_serve_runs_in_progress", Help: "Runs in progress in this service.",
		}),
		deletedFiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_deleted_files_total", Help: "Files deleted (or moved to the trash) by the runs of this service.",
		}, []string{"table"}),
		deletedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_deleted_bytes_total", Help: "Bytes of the files deleted (or moved to the trash) by the runs of this service.",
		}, []string{"table"}),
		reclaimable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "deltavacuum_serve_reclaimable_bytes", Help: "Bytes a VACUUM at the table's policy would delete, at the last inspection.",
		}, []string{"table"}),
		staleRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_stale_run_records_total", Help: "Times a RUNNING run record without a fresh heartbeat was passed over as stale.",
		}, []string{"table"}),
		purgedFiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_trash_purged_files_total", Help: "Files of trash past the undo window deleted for good.",
		}, []string{"table"}),
		untrackedFiles: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "deltavacuum_serve_untracked_files", Help: "Files no commit names (what failed or unfinished writers leave) in the plan of the table's last run that listed it.",
		}, []string{"table"}),
		untrackedBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "deltavacuum_serve_untracked_bytes", Help: "Bytes of the untracked files in the plan of the table's last run that listed it.",
		}, []string{"table"}),
		untrackedGrew: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_untracked_grew_total", Help: "Runs whose plan held more untracked files than the table's run before (each posted to the webhook as untracked.grew).",
		}, []string{"table"}),
	}
	reg.MustRegister(m.runs, m.inProgress, m.deletedFiles, m.deletedBytes, m.reclaimable, m.staleRecords, m.purgedFiles,
		m.untrackedFiles, m.untrackedBytes, m.untrackedGrew)
	return m
}

// newMisfires is the scheduler's count of lost fires.
func newMisfires(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "deltavacuum_serve_schedule_misfires_total", Help: "Scheduled fires lost (service down, window closed, table busy) or merged into a catch-up run.",
	}, []string{"table"})
	reg.MustRegister(c)
	return c
}
