package service

import "github.com/prometheus/client_golang/prometheus"

// metrics are the service's Prometheus metrics, on its own registry (GET /metrics).
type metrics struct {
	runs         *prometheus.CounterVec
	inProgress   prometheus.Gauge
	deletedFiles *prometheus.CounterVec
	deletedBytes *prometheus.CounterVec
	reclaimable  *prometheus.GaugeVec
	misfires     *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_runs_total", Help: "Runs ended, by table, trigger (schedule, api) and status (COMPLETED, FAILED).",
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
		misfires: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_schedule_misfires_total", Help: "Scheduled fires lost (service down, window closed, table busy) or merged into a catch-up run.",
		}, []string{"table"}),
	}
	reg.MustRegister(m.runs, m.inProgress, m.deletedFiles, m.deletedBytes, m.reclaimable, m.misfires)
	return m
}
