package cli

import (
	"fmt"
	"github.com/deltavacuum/deltavacuum/session"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// sessionFlags are the flags every table command shares.
type sessionFlags struct {
	warehouse      string
	catalogFile    string
	confs          []string
	storageOptions []string
	cmd            *cobra.Command // whose context carries the run's redact.Redactor
}

// vacuumSettings are the --conf keys of the commands that run a VACUUM (vacuum, sql): every
// session setting is read there and nowhere else (session.Session.Vacuum).
var vacuumSettings = session.KnownSettings

// add adds the session flags to cmd. honoured are the --conf keys cmd reads: its help lists
// those only. A command that reads none still takes --conf (hidden, checked as everywhere), so
// that a program may give every command of one session the same settings, as the Python
// package does.
func (f *sessionFlags) add(cmd *cobra.Command, honoured ...string) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&f.warehouse, "warehouse", "", "warehouse root for table names: a Fabric lakehouse (Tables/<schema>/<table>) or a Spark warehouse (<schema>.db/<table>); default $"+catalog.EnvWarehouse)
	fl.StringVar(&f.catalogFile, "catalog", "", "catalog file (YAML or TOML) mapping table names to locations")
	if len(honoured) > 0 {
		fl.StringArrayVar(&f.confs, "conf", nil, "session setting KEY=VALUE: "+strings.Join(honoured, ", "))
	} else {
		fl.StringArrayVar(&f.confs, "conf", nil, "session setting KEY=VALUE: "+cmd.Name()+" reads none")
		_ = fl.MarkHidden("conf")
	}
	fl.StringArrayVar(&f.storageOptions, "storage-option", nil, "object-store setting KEY=VALUE (aws_region, aws_endpoint, azure_storage_account_key, azure_storage_sas_token, google_service_account, concurrency, max_requests_per_second, ...; deltavacuum storage-options lists them all)")
	_ = cmd.RegisterFlagCompletionFunc("conf", completeKeys(honoured))
	_ = cmd.RegisterFlagCompletionFunc("storage-option", completeKeys(storageOptionNames()))
}

// session builds the library session the flags describe. Unknown --conf keys are usage errors.
// The secrets it learns (storage options, the warehouse, the catalog's locations) are
// registered with the run's Redactor before anything is printed.
func (f *sessionFlags) session() (*session.Session, error) {
	var r *redact.Redactor
	if f.cmd != nil {
		r = redact.FromContext(f.cmd.Context())
	}
	for _, o := range f.storageOptions {
		k, v, _ := strings.Cut(o, "=")
		if name, ok := location.Canonical(k); ok {
			registerOption(r, name, v)
		} else {
			r.Add(v) // an unknown key: its value is not shown either
		}
	}
	r.AddURI(f.warehouse)
	settings := map[string]string{}
	for _, c := range f.confs {
		key, value, ok := strings.Cut(c, "=")
		if !ok {
			return nil, usagef("--conf %q: expected KEY=VALUE", c)
		}
		key = strings.TrimSpace(key)
		known := false
		for _, k := range session.KnownSettings {
			known = known || k == key
		}
		if !known {
			return nil, usagef("--conf %s: unknown setting; supported: %s", key, strings.Join(session.KnownSettings, ", "))
		}
		if _, err := parseBool(key, value); err != nil {
			return nil, err
		}
		settings[key] = strings.TrimSpace(value)
	}
	storageOpts, err := location.ParseStorageOptions(f.storageOptions)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	cat := &catalog.Catalog{Warehouse: f.warehouse, IsTable: session.IsTable(storageOpts), Dirs: session.DirsOf(storageOpts)}
	if cat.Warehouse == "" {
		cat.Warehouse = os.Getenv(catalog.EnvWarehouse)
	}
	if f.catalogFile != "" {
		cf, err := catalog.LoadFile(f.catalogFile)
		if err != nil {
			return nil, err
		}
		cat.Tables = cf.Tables
		r.AddURI(cf.Warehouse)
		for _, loc := range cf.Tables {
			r.AddURI(loc)
		}
		if cat.Warehouse == "" {
			cat.Warehouse = cf.Warehouse
		}
	}
	return session.NewSession(session.Config{Catalog: cat, Settings: settings, StorageOptions: storageOpts})
}

// sparkPath prints a location as Spark prints paths: file:/path for local files.
func sparkPath(location, rel string) string {
	p := strings.TrimSuffix(location, "/")
	if rel != "" {
		p += "/" + rel
	}
	if strings.HasPrefix(p, "file:///") {
		p = "file:/" + strings.TrimPrefix(p, "file:///")
	}
	return p
}

// printStatement renders one statement's result as text.
func printStatement(w, stderr io.Writer, r *session.Result) error {
	for _, warn := range r.Warnings {
		fmt.Fprintln(stderr, "warning: "+warn)
	}
	switch {
	case r.Vacuum != nil:
		v := r.Vacuum
		if v.DryRun {
			err := v.Files.Each(func(f vacuum.File) error {
				fmt.Fprintln(w, displayPath(sparkPath(v.Table, f.Path)))
				return nil
			})
			if err != nil {
				return err
			}
			for _, d := range v.Dirs {
				fmt.Fprintln(w, displayPath(sparkPath(v.Table, d.Path)))
			}
			fmt.Fprintf(w, "Found %s (%s) and %s in a total of %s that are safe to delete.\n",
				filesPhrase(v.NumFilesToDelete), bytesPhrase(v.SizeOfDataToDelete),
				countPhrase(int64(len(v.Dirs)), "directory", "directories"), countPhrase(int64(v.TotalDirectories), "directory", "directories"))
			printNotes(stderr, v)
			return nil
		}
		fmt.Fprintln(w, sparkPath(v.Table, ""))
		if err := printResult(w, v); err != nil {
			return err
		}
		printNotes(stderr, v)
	case r.Kind == "SET":
		for _, k := range session.SortedKeys(r.Settings) {
			fmt.Fprintf(w, "%s\t%s\n", k, r.Settings[k])
		}
	case r.Kind == "RESET":
		fmt.Fprintln(w, "OK")
	case r.Version != nil:
		fmt.Fprintf(w, "%s: committed version %d\n", sparkPath(r.Table, ""), *r.Version)
	case r.Properties != nil:
		for _, k := range session.SortedKeys(r.Properties) {
			fmt.Fprintf(w, "%s\t%s\n", k, r.Properties[k])
		}
	case r.Kind == "SHOW TABLES":
		fmt.Fprintln(w, "namespace\ttableName\tisTemporary\tlocation")
		for _, t := range r.Tables {
			fmt.Fprintf(w, "%s\t%s\t%t\t%s\n", t.Namespace, t.TableName, t.IsTemporary, displayPath(sparkPath(t.Location, "")))
		}
	case r.Kind == "DESCRIBE HISTORY":
		fmt.Fprintln(w, "version\ttimestamp\toperation\toperationParameters\toperationMetrics\tengineInfo")
		for _, h := range r.History {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", h.Version, h.Timestamp.Format("2006-01-02 15:04:05.000"), h.Operation,
				h.OperationParameters, h.OperationMetrics, h.EngineInfo)
		}
	case r.Detail != nil:
		d := r.Detail
		fmt.Fprintf(w, "format\t%s\nid\t%s\nlocation\t%s\nversion\t%d\nnumFiles\t%d\nsizeInBytes\t%d\npartitionColumns\t%s\n",
			d.Format, d.ID, sparkPath(d.Location, ""), d.Version, d.NumFiles, d.SizeInBytes, strings.Join(d.PartitionColumns, ","))
		fmt.Fprintf(w, "minReaderVersion\t%d\nminWriterVersion\t%d\ntableFeatures\t%s\n", d.MinReaderVersion, d.MinWriterVersion, strings.Join(d.TableFeatures, ","))
		for _, k := range session.SortedKeys(d.Properties) {
			fmt.Fprintf(w, "properties.%s\t%s\n", k, d.Properties[k])
		}
		if rc := r.Reclaimable; rc != nil {
			fmt.Fprintf(w, "reclaimableFiles\t%d\nreclaimableSizeInBytes\t%d\nreclaimableDirectories\t%d\nreclaimableRetentionHours\t%g\nreclaimableCutoff\t%s\nreclaimableCostPerMonth\t%.2f %s\n",
				rc.Files, rc.Bytes, rc.Directories, rc.RetentionHours, rc.Cutoff.Format(time.RFC3339), rc.CostPerMonth, rc.Price.Currency)
		}
	case r.Inspect != nil:
		printReport(w, r.Inspect)
	case r.Explain != nil:
		printExplained(w, r.Explain)
	}
	return nil
}

// openTable opens the table a command names, with the session its flags describe.
func (f *sessionFlags) openTable(cmd *cobra.Command, arg string) (*deltavacuum.Table, error) {
	s, err := f.session()
	if err != nil {
		return nil, err
	}
	return s.OpenArg(cmd.Context(), arg)
}
