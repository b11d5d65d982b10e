package service

import "github.com/prometheus/client_golang/prometheus"

// opsMetrics are the metrics of the operations side (ops.go).
type opsMetrics struct {
	webhookFailures prometheus.Counter
	purgedFiles     *prometheus.CounterVec
	staleRecords    *prometheus.CounterVec
	discovered      *prometheus.GaugeVec
}

func newOpsMetrics(reg *prometheus.Registry) *opsMetrics {
	m := &opsMetrics{
		webhookFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "deltavacuum_serve_webhook_failures_total", Help: "Failed-run webhooks not delivered after every attempt.",
		}),
		purgedFiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_trash_purged_files_total", Help: "Files of trash past the undo window deleted for good.",
		}, []string{"table"}),
		staleRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deltavacuum_serve_stale_run_records_total", Help: "Times a RUNNING run record without a fresh heartbeat was passed over as stale.",
		}, []string{"table"}),
		discovered: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "deltavacuum_serve_discovered_tables", Help: "Tables found under a discover root at its last refresh.",
		}, []string{"root"}),
	}
	reg.MustRegister(m.webhookFailures, m.purgedFiles, m.staleRecords, m.discovered)
	return m
}
