package service

import "github.com/prometheus/client_golang/prometheus"

// The service's Prometheus metrics are on its own registry (GET /metrics), each owned by the part
// that counts it: the runner's runs and the scheduler's misfires (service/runner), discovery's
// tables found (service/tables), the webhook's failures (here).

// newWebhookFailures counts the webhook's deliveries given up (registered with or without a
// webhook: it reads 0 without one).
func newWebhookFailures(reg *prometheus.Registry) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "deltavacuum_serve_webhook_failures_total", Help: "Webhooks (failed runs, untracked files grown) not delivered after every attempt.",
	})
	reg.MustRegister(c)
	return c
}
