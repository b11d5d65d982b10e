package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/service"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
)

// tickEvery is how often serve looks for scheduled runs that are due.
const tickEvery = 15 * time.Second

func newServeCmd() *cobra.Command {
	var (
		cfgPath  string
		check    bool
		drainFor time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the maintenance service: scheduled VACUUM runs and an HTTP API for pipelines",
		Long: `Run the maintenance service of maintenance.yaml: each table's VACUUM on its schedule, and an
HTTP API under /api/ (GET /api/tables, then each table's inspect, preview, runs, and each run's
cancel and undo) for pipelines; Prometheus metrics at /metrics, a health check at /healthz.
Listens on 127.0.0.1 unless the file says otherwise (then a token is required). Logs are JSON
lines on standard error.

The file (YAML) needs dataDir, where the state database lives, and tables (each a path, or a
name with a warehouse or catalog, with its policy and schedule) or discover roots; it may set
listen, token, maxConcurrentRuns, storageOptions (taken from environment variables), stores,
webhook and staleRunAfter. serve --check --config FILE says what is wrong in a file.

With --check it validates the file, then opens each configured table read-only (the
latest snapshot of its log; nothing is written) and says which is broken and why (a location
that does not exist, a folder that is not a Delta table, a name the catalog does not resolve,
refused credentials): it exits 1 when one is, so that a pipeline checking the file catches it.

On SIGINT or SIGTERM it stops starting runs, lets each run in progress stop after its current
batch of deletes (VACUUM END and the run are recorded FAILED), and exits.`,
		Example: `  deltavacuum serve --config maintenance.yaml
  deltavacuum serve --config maintenance.yaml --check   # exit 1 when a table is broken`,
		Args: exactArgs(0, "no arguments (the tables are in --config)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfgPath == "" {
				return usagef("serve needs --config FILE, a maintenance.yaml (deltavacuum serve --help says what it holds)")
			}
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			for _, w := range cfg.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", cfgPath, w)
			}
			if check {
				return checkServe(cmd, cfgPath, cfg)
			}
			return serve(cmd.Context(), cmd, cfg, drainFor, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgPath, "config", "", "the maintenance.yaml file")
	f.BoolVar(&check, "check", false, "validate the file, open each configured table read-only, and exit (1 when a table is broken)")
	f.DurationVar(&drainFor, "shutdown-timeout", 10*time.Minute, "how long to wait on shutdown for runs to stop after their batch")
	return cmd
}

// checkServe is serve --check: the file is valid (it parsed), and each configured table opens
// and its log reads (service.CheckTables: read-only, nothing written); a broken table is
// named with why, and makes the check fail (exit 1), so that a pipeline checking the file
// catches a table that does not exist or is not a Delta table.
func checkServe(cmd *cobra.Command, cfgPath string, cfg *config.Config) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s: valid, %d tables, %d discover roots (not listed by --check)\n", cfgPath, len(cfg.Tables), len(cfg.Discover))
	broken := 0
	for _, c := range service.CheckTables(cmd.Context(), cfg, nil) {
		if c.Broken != "" {
			broken++
			fmt.Fprintf(out, "table %s (%s): broken: %s\n", c.ID, c.Where, c.Broken)
			continue
		}
		fmt.Fprintf(out, "table %s (%s): ok, version %d\n", c.ID, c.Where, c.Version)
	}
	if broken > 0 {
		return fmt.Errorf("%s: the file is valid, but %d of %d tables are broken (above): serve would start, and list them as broken", cfgPath, broken, len(cfg.Tables))
	}
	return nil
}

// serve runs the service of cfg until ctx ends; ready, when set, is told the address it listens on.
func serve(ctx context.Context, cmd *cobra.Command, cfg *config.Config, drainFor time.Duration, ready func(net.Addr)) error {
	db, err := state.Open(ctx, cfg.DataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
	srv, err := service.New(service.Options{Config: cfg, State: db, Logger: logger})
	if err != nil {
		return err
	}
	if err := srv.StartScheduler(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	logger.Info("listening", "address", ln.Addr().String(), "tables", len(cfg.Tables), "dataDir", cfg.DataDir)
	if ready != nil {
		ready(ln.Addr())
	}

	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		srv.Tick(ctx)
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-served:
			break loop
		case <-tick.C:
		}
	}
	logger.Info("shutting down")
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainFor)
	defer cancel()
	runsErr := srv.Shutdown(down)
	httpErr := hs.Shutdown(down)
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, runsErr, httpErr)
}
