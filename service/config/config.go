package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// DefaultListen is where the service listens when the file says nothing: loopback only.
const DefaultListen = "127.0.0.1:8080"

// MinTokenLength is the shortest token the service accepts.
const MinTokenLength = 16

// Config is a validated maintenance.yaml.
type Config struct {
	// Listen is host:port.
	Listen string
	// DataDir is where the state database lives: absolute, or made absolute against the
	// directory of the configuration file.
	DataDir string
	// Token is the environment variable holding the API token ("" when none is configured).
	Token EnvRef
	// MaxConcurrentRuns bounds the runs in progress across all tables.
	MaxConcurrentRuns int
	// StorageOptions apply to every table (a table's own override them): canonical option
	// name to the environment variable holding its value.
	StorageOptions map[string]EnvRef
	Tables         []Table
	// Discover are the roots whose Delta tables are found by listing (ops.go).
	Discover []Discover
	// Stores limit the requests per second of the tables under a location prefix.
	Stores []Store
	// Webhook, when set, is told of every failed run.
	Webhook *Webhook
	// Fabric, when set, maps the lakehouses Fabric's Table Maintenance job API may name
	// (fabric.go; docs/fabric.md).
	Fabric *Fabric
	// StaleRunAfter is how long a RUNNING run record may go without a heartbeat before it is
	// taken for the record of a process that died (DefaultStaleRunAfter when not written).
	StaleRunAfter time.Duration
	// Warnings are what is valid but likely not meant (a retention of exactly 2555 hours):
	// serve --check prints them, serve logs them.
	Warnings []string
}

// Table is one table the service maintains.
type Table struct {
	// ID names the table in the API: the id key, else the name.
	ID string
	// Path is a location (path or URI); or Name (schema.table, 1 to 3 parts) is resolved
	// with Warehouse or Catalog (a catalog file).
	Path      string
	Name      string
	Warehouse string
	Catalog   string
	Policy    Policy
	// Schedule is nil for a table that runs only when asked through the API.
	Schedule *Schedule
	// DryRunOnly tables are planned and inspected, never vacuumed.
	DryRunOnly     bool
	StorageOptions map[string]EnvRef
	// StreamingCheckpoints are the checkpoint locations of the Structured Streaming queries
	// that read the table: what each reads next is kept (run.ReaderOptions).
	StreamingCheckpoints []string
	// Root is the discover root the table was found under ("" for a table of the file): the
	// tables of one root are looked at for shallow clones of each other.
	Root string
	// Line is where the table is in the file, for messages.
	Line int
}

// Mode is the VACUUM mode of a policy.
type Mode string

// The modes. Auto runs LITE while the log reaches back to the last vacuum, and FULL every
// Policy.FullEvery.
const (
	ModeFull Mode = "full"
	ModeLite Mode = "lite"
	ModeAuto Mode = "auto"
)

// DefaultFullEvery is how often mode auto runs FULL when the policy does not say.
const DefaultFullEvery = 7 * 24 * time.Hour

// DefaultInspectEvery is how often the service inspects a table when the policy does not say;
// MinInspectEvery is the shortest interval a policy may ask for (an inspection lists the
// table's directory: more often is a load on the store, not a finer chart).
const (
	DefaultInspectEvery = 24 * time.Hour
	MinInspectEvery     = 5 * time.Minute
)

// defaultPolicy is the policy of a table whose configuration writes none.
func defaultPolicy() Policy {
	return Policy{RetentionCheck: true, Mode: ModeFull, InspectEvery: DefaultInspectEvery}
}

// Policy is how a table is vacuumed.
type Policy struct {
	Retention Retention
	// RetentionCheck is Spark's retentionDurationCheck: on, unless the policy says
	// `retentionCheck: disabled`.
	RetentionCheck bool
	Mode           Mode
	// FullEvery is the interval of FULL runs in mode auto (0 otherwise).
	FullEvery time.Duration
	// Trash moves the files of a run to _deltavacuum/trash/ instead of deleting them.
	Trash bool
	// UndoWindow, with Trash, is how long a run's trash is kept (its undo stays possible);
	// the service purges older trash. 0: never purged by the service.
	UndoWindow time.Duration
	// InspectEvery is how often the service inspects the table on its own (the figures of
	// the charts); 0 (`inspectEvery: off`): only after runs and when asked.
	InspectEvery time.Duration
}

// Retention is a preset or a number of hours. The zero value (nothing configured) is the
// table's own delta.deletedFileRetentionDuration.
type Retention struct {
	Preset string  // a name of Presets, or ""
	Hours  float64 // the hours: the preset's, or those written
	Set    bool    // false: the table's own retention
}

// Preset is a named retention.
type Preset struct {
	Name  string
	Hours float64
	// Range is the span the guidance gives for such tables; the preset takes its long end.
	Range string
	Doc   string
}

// Presets are the retention presets, each the long end of its range: a preset never deletes
// what a shorter guess would keep. Write hours for a shorter retention. A table whose own
// delta.deletedFileRetentionDuration is longer keeps its own.
var Presets = []Preset{
	{Name: "dimensional", Hours: 720, Range: "168–720 h", Doc: "dimension tables, rewritten rarely, read with time travel for audits"},
	{Name: "merge-heavy-fact", Hours: 72, Range: "48–72 h", Doc: "fact tables under frequent MERGE, whose rewrites leave many tombstones"},
	{Name: "streaming-sink", Hours: 48, Range: "24–48 h", Doc: "tables a stream appends to and compacts, many small files"},
	{Name: "regulated", Hours: 61320, Range: "often 7 years (2555 days, 61 320 h)", Doc: "tables under a retention rule; check yours"},
}

// PresetByName returns the preset of that name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// Schedule is when a table's runs start.
type Schedule struct {
	Cron *schedule.Cron
	// TimeZone is the name written (an IANA name, or UTC).
	TimeZone string
	// Window, when set, is the off-peak window a run must start inside, in the same zone.
	Window *schedule.Window
	// Jitter delays each run by up to this much (deterministic per table).
	Jitter time.Duration
}

// EnvRef is the name of an environment variable, written ${NAME} in the file.
type EnvRef string

// Resolve returns the value of the variable, or an error naming it (never a value) when it
// is not set or empty.
func (r EnvRef) Resolve(getenv func(string) string) (string, error) {
	v := getenv(string(r))
	if v == "" {
		return "", fmt.Errorf("environment variable %s (referenced by the configuration) is not set or empty", string(r))
	}
	return v, nil
}

// ResolveToken returns the API token, or "" when none is configured; a token shorter than
// MinTokenLength is refused.
func (c *Config) ResolveToken(getenv func(string) string) (string, error) {
	if c.Token == "" {
		return "", nil
	}
	v, err := c.Token.Resolve(getenv)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if len(v) < MinTokenLength {
		return "", fmt.Errorf("token: environment variable %s holds fewer than %d characters; use a long random value", string(c.Token), MinTokenLength)
	}
	return v, nil
}

// ResolveStorageOptions returns the storage options of t (the configuration's, overridden by
// the table's) with their values read from the environment, validated as
// --storage-option flags are.
func (c *Config) ResolveStorageOptions(t *Table, getenv func(string) string) (location.Options, error) {
	merged := map[string]EnvRef{}
	for k, v := range c.StorageOptions {
		merged[k] = v
	}
	for k, v := range t.StorageOptions {
		merged[k] = v
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var flags []string
	for _, k := range keys {
		v, err := merged[k].Resolve(getenv)
		if err != nil {
			return nil, fmt.Errorf("table %s: storage option %s: %w", t.ID, k, err)
		}
		flags = append(flags, k+"="+v)
	}
	o, err := location.ParseStorageOptions(flags)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.ID, err)
	}
	return o, nil
}

// Loopback reports whether Listen is on a loopback address only.
func (c *Config) Loopback() bool { return isLoopback(c.Listen) }

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Problem is one thing wrong in the file.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Error lists every problem found in a configuration file.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "configuration %s is not valid:", e.File)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return Parse(b, path, filepath.Dir(abs))
}

// Parse validates the configuration in b; name is used in messages, and a relative dataDir or
// catalog file is made absolute against dir.
func Parse(b []byte, name, dir string) (*Config, error) {
	p := &parser{name: name, dir: dir}
	root, err := p.document(b)
	if err != nil {
		return nil, err
	}
	cfg := p.config(root)
	if len(p.problems) > 0 {
		return nil, &Error{File: name, Problems: p.problems}
	}
	p.fabricWarnings(cfg)
	cfg.Warnings = p.warnings
	return cfg, nil
}

type parser struct {
	name, dir string
	problems  []Problem
	warnings  []string
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.problems = append(p.problems, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// document decodes the one YAML document of b into its node tree.
func (p *parser) document(b []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: p.name, Problems: []Problem{{Msg: "the file is empty; it needs at least dataDir and tables"}}}
		}
		return nil, &Error{File: p.name, Problems: []Problem{{Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}}
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return nil, &Error{File: p.name, Problems: []Problem{{Line: second.Line, Msg: "a second YAML document ('---'): the file must hold one"}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{File: p.name, Problems: []Problem{{Msg: "not a YAML document"}}}
	}
	if bad := findAlias(doc.Content[0]); bad != nil {
		return nil, &Error{File: p.name, Problems: []Problem{{Line: bad.Line, Msg: "anchors and aliases (&, *) are not accepted: write each value where it applies"}}}
	}
	return doc.Content[0], nil
}

func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

// field is one key of a mapping with its value.
type field struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// fields returns the keys of mapping n, refusing keys not in known. yaml.v3 already refuses a
// duplicate key when decoding.
func (p *parser) fields(n *yaml.Node, what string, known ...string) map[string]field {
	out := map[string]field{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping (key: value lines)", what)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			p.errf(k, "%s: a key must be a plain name", what)
			continue
		}
		ok := false
		for _, name := range known {
			if k.Value == name {
				ok = true
				break
			}
		}
		if !ok {
			p.errf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.errf(k, "%s: key %q given twice", what, k.Value)
			continue
		}
		out[k.Value] = field{key: k.Value, keyN: k, value: v}
	}
	return out
}

func (p *parser) str(f field, what string) (string, bool) {
	v := f.value
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		p.errf(v, "%s must be a string", what)
		return "", false
	}
	if strings.TrimSpace(v.Value) == "" {
		p.errf(v, "%s is empty", what)
		return "", false
	}
	if strings.TrimSpace(v.Value) != v.Value {
		p.errf(v, "%s has leading or trailing blanks", what)
		return "", false
	}
	return v.Value, true
}

func (p *parser) boolean(f field, what string) (bool, bool) {
	v := f.value
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || (v.Value != "true" && v.Value != "false") {
		p.errf(v, "%s must be true or false", what)
		return false, false
	}
	return v.Value == "true", true
}

func (p *parser) integer(f field, what string, min, max int) (int, bool) {
	v := f.value
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		p.errf(v, "%s must be a whole number", what)
		return 0, false
	}
	n, err := strconv.Atoi(v.Value)
	if err != nil || n < min || n > max {
		p.errf(v, "%s must be between %d and %d", what, min, max)
		return 0, false
	}
	return n, true
}

// duration parses a Go duration ("90m", "168h").
func (p *parser) duration(f field, what string, min, max time.Duration) (time.Duration, bool) {
	s, ok := p.str(f, what)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		p.errf(f.value, "%s %q is not a duration (write it as 30m, 2h or 168h)", what, s)
		return 0, false
	}
	if d < min || d > max {
		p.errf(f.value, "%s %s must be between %s and %s", what, s, min, max)
		return 0, false
	}
	return d, true
}

var envRefPattern = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// envRef parses ${NAME}; anything else is refused as a secret written in the file.
func (p *parser) envRef(f field, what string) (EnvRef, bool) {
	v := f.value
	if v.Kind != yaml.ScalarNode {
		p.errf(v, "%s must be an environment variable reference such as ${NAME}", what)
		return "", false
	}
	m := envRefPattern.FindStringSubmatch(v.Value)
	if m == nil {
		// The value is never echoed: it may be the secret itself.
		p.errf(v, "%s must be an environment variable reference such as ${NAME}; a value written in the file is refused (keep secrets out of configuration files)", what)
		return "", false
	}
	return EnvRef(m[1]), true
}

var topKeys = []string{"listen", "dataDir", "token", "maxConcurrentRuns", "storageOptions", "tables", "discover", "stores", "webhook", "staleRunAfter", "fabric"}

func (p *parser) config(root *yaml.Node) *Config {
	cfg := &Config{Listen: DefaultListen, MaxConcurrentRuns: 1}
	fs := p.fields(root, "the configuration", topKeys...)
	if root.Kind != yaml.MappingNode {
		return cfg
	}
	if f, ok := fs["listen"]; ok {
		if s, ok := p.str(f, "listen"); ok {
			p.listen(f.value, s)
			cfg.Listen = s
		}
	}
	if f, ok := fs["dataDir"]; ok {
		if s, ok := p.str(f, "dataDir"); ok {
			cfg.DataDir = p.abs(s)
		}
	} else {
		p.errf(root, "dataDir is missing: the directory where the service keeps its state database")
	}
	if f, ok := fs["token"]; ok {
		if r, ok := p.envRef(f, "token"); ok {
			cfg.Token = r
		}
	}
	if f, ok := fs["maxConcurrentRuns"]; ok {
		if n, ok := p.integer(f, "maxConcurrentRuns", 1, 64); ok {
			cfg.MaxConcurrentRuns = n
		}
	}
	if f, ok := fs["storageOptions"]; ok {
		cfg.StorageOptions = p.storageOptions(f, "storageOptions")
	}
	if _, hasToken := fs["token"]; !hasToken && !isLoopback(cfg.Listen) {
		if f, ok := fs["listen"]; ok {
			p.errf(f.value, "listen %s is not a loopback address: a token is required (token: ${DELTAVACUUM_TOKEN})", cfg.Listen)
		}
	}
	p.ops(fs, cfg)
	if f, ok := fs["fabric"]; ok {
		cfg.Fabric = p.fabric(f)
	}
	f, ok := fs["tables"]
	if !ok {
		if len(cfg.Discover) == 0 {
			p.errf(root, "tables is missing: list the tables to maintain (or discover: roots to find them under)")
		}
		return cfg
	}
	if f.value.Kind != yaml.SequenceNode || len(f.value.Content) == 0 {
		p.errf(f.value, "tables must be a list of at least one table (- path: … or - name: …)")
		return cfg
	}
	seen := map[string]int{}
	for _, d := range cfg.Discover {
		seen[strings.ToLower(d.ID)] = d.Line
	}
	seenAt := map[string]int{}
	for _, tn := range f.value.Content {
		t, ok := p.table(tn)
		if !ok {
			continue
		}
		key := strings.ToLower(t.ID)
		if line, dup := seen[key]; dup {
			p.errf(tn, "table id %q is already used by the table on line %d: ids must be unique (case-insensitively)", t.ID, line)
			continue
		}
		if t.Path != "" {
			// One table under two ids would not be held as one: two runs at once, two policies.
			at := LocationKey(t.Path)
			if line, dup := seenAt[at]; dup {
				p.errf(tn, "table %s: path %s is the table of line %d (under another id): give each table once", t.ID, t.Path, line)
				continue
			}
			seenAt[at] = t.Line
		}
		seen[key] = t.Line
		cfg.Tables = append(cfg.Tables, t)
	}
	return cfg
}

func (p *parser) listen(n *yaml.Node, s string) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		p.errf(n, "listen %q must be host:port (127.0.0.1:8080)", s)
		return
	}
	if num, err := strconv.Atoi(port); err != nil || num < 0 || num > 65535 {
		p.errf(n, "listen %q: the port must be a number from 0 to 65535", s)
		return
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		p.errf(n, "listen %q: the host must be an IP address or localhost (a name could resolve to a public address)", s)
	}
}

func (p *parser) abs(s string) string {
	if filepath.IsAbs(s) || p.dir == "" {
		return filepath.Clean(s)
	}
	return filepath.Join(p.dir, s)
}

func (p *parser) storageOptions(f field, what string) map[string]EnvRef {
	out := map[string]EnvRef{}
	if f.value.Kind != yaml.MappingNode {
		p.errf(f.value, "%s must be a mapping of option: ${ENV_VAR}", what)
		return out
	}
	for i := 0; i+1 < len(f.value.Content); i += 2 {
		k, v := f.value.Content[i], f.value.Content[i+1]
		name, ok := location.Canonical(k.Value)
		if k.Tag != "!!str" || !ok {
			p.errf(k, "%s: %v", what, location.UnknownOptionError(k.Value))
			continue
		}
		if _, dup := out[name]; dup {
			p.errf(k, "%s: option %s given twice (an alias names the same option)", what, name)
			continue
		}
		if r, ok := p.envRef(field{key: k.Value, keyN: k, value: v}, what+"."+k.Value); ok {
			out[name] = r
		}
	}
	return out
}

var (
	tableKeys  = []string{"id", "path", "name", "warehouse", "catalog", "policy", "schedule", "dryRunOnly", "storageOptions", "streamingCheckpoints"}
	idPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	namePart   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)
	policyKeys = []string{"retention", "retentionCheck", "mode", "fullEvery", "trash", "undoWindow", "inspectEvery"}
	schedKeys  = []string{"cron", "timezone", "window", "jitter"}
	windowKeys = []string{"start", "end"}
)

func (p *parser) table(n *yaml.Node) (Table, bool) {
	t := Table{Line: n.Line, Policy: defaultPolicy()}
	before := len(p.problems)
	fs := p.fields(n, "table", tableKeys...)
	if n.Kind != yaml.MappingNode {
		return t, false
	}
	what := fmt.Sprintf("table (line %d)", n.Line)
	for _, k := range []string{"path", "name", "warehouse", "catalog"} {
		f, ok := fs[k]
		if !ok {
			continue
		}
		s, ok := p.str(f, k)
		if !ok {
			continue
		}
		switch k {
		case "path":
			t.Path = s
			p.location(f.value, "path", s)
		case "name":
			t.Name = s
			parts := strings.Split(s, ".")
			okName := len(parts) <= 3
			for _, part := range parts {
				okName = okName && namePart.MatchString(part)
			}
			if !okName {
				p.errf(f.value, "name %q must be table, schema.table or catalog.schema.table (letters, digits, _ and -)", s)
			}
		case "warehouse":
			t.Warehouse = s
			p.location(f.value, "warehouse", s)
		case "catalog":
			t.Catalog = p.abs(s)
		}
	}
	switch {
	case t.Path != "" && t.Name != "":
		p.errf(n, "%s has both path and name: give one", what)
	case t.Path == "" && t.Name == "" && len(p.problems) == before:
		p.errf(n, "%s has neither path nor name", what)
	case t.Path != "" && (t.Warehouse != "" || t.Catalog != ""):
		p.errf(n, "%s: warehouse and catalog resolve a name; a table given by path takes neither", what)
	case t.Name != "" && t.Warehouse == "" && t.Catalog == "":
		p.errf(n, "%s: name %q needs warehouse or catalog to be resolved", what, t.Name)
	}
	if f, ok := fs["streamingCheckpoints"]; ok {
		t.StreamingCheckpoints = p.locations(f, "streamingCheckpoints")
	}
	if f, ok := fs["id"]; ok {
		if s, ok := p.str(f, "id"); ok {
			if !idPattern.MatchString(s) {
				p.errf(f.value, "id %q must be letters, digits, '.', '_' or '-' (at most 128, starting with a letter or digit)", s)
			}
			t.ID = s
		}
	} else if t.Name != "" {
		t.ID = t.Name
	} else if t.Path != "" {
		p.errf(n, "%s: a table given by path needs an id (the name the API uses for it)", what)
	}
	p.settings(fs, &t.Policy, &t.Schedule, &t.DryRunOnly, &t.StorageOptions)
	return t, len(p.problems) == before
}

// location refuses a location the library would refuse, and one carrying a secret (a
// password, a query such as a SAS): secrets come from the environment.
// locations reads a list of locations (paths or URIs), each checked as a table's path is.
func (p *parser) locations(f field, what string) []string {
	v := f.value
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s must be a list of locations", what)
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, item := range v.Content {
		s, ok := p.str(field{value: item}, what+" entry")
		if !ok {
			continue
		}
		if seen[s] {
			p.errf(item, "%s names %s twice", what, s)
			continue
		}
		seen[s] = true
		p.location(item, what, s)
		out = append(out, s)
	}
	return out
}

func (p *parser) location(n *yaml.Node, what, s string) {
	if location.SafeURI(s) != strings.TrimSuffix(s, "/") && strings.Contains(s, "://") {
		p.errf(n, "%s %s carries a password or a query (a SAS?): give credentials with storageOptions from the environment", what, location.SafeURI(s))
		return
	}
	if _, err := location.Kind(s); err != nil {
		p.errf(n, "%s: %v", what, err)
	}
}

func (p *parser) policy(n *yaml.Node) Policy {
	pol := defaultPolicy()
	fs := p.fields(n, "policy", policyKeys...)
	if f, ok := fs["retention"]; ok {
		pol.Retention = p.retention(f.value)
	}
	if f, ok := fs["retentionCheck"]; ok {
		v := f.value
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == "enabled":
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == "disabled":
			pol.RetentionCheck = false
		default:
			p.errf(v, "retentionCheck must be enabled or disabled (written out: it guards against deleting files a reader still needs)")
		}
	}
	if f, ok := fs["mode"]; ok {
		if s, ok := p.str(f, "mode"); ok {
			switch m := Mode(strings.ToLower(s)); m {
			case ModeFull, ModeLite, ModeAuto:
				pol.Mode = m
			default:
				p.errf(f.value, "mode %q must be full, lite or auto", s)
			}
		}
	}
	if f, ok := fs["fullEvery"]; ok {
		if pol.Mode != ModeAuto {
			p.errf(f.keyN, "fullEvery applies to mode auto only")
		} else if d, ok := p.duration(f, "fullEvery", time.Hour, 366*24*time.Hour); ok {
			pol.FullEvery = d
		}
	} else if pol.Mode == ModeAuto {
		pol.FullEvery = DefaultFullEvery
	}
	if f, ok := fs["trash"]; ok {
		pol.Trash, _ = p.boolean(f, "trash")
	}
	if f, ok := fs["undoWindow"]; ok {
		if !pol.Trash {
			p.errf(f.keyN, "undoWindow applies with trash: true only (without trash a run's files are deleted at once; the store's own versioning or soft delete is its undo window)")
		} else if d, ok := p.duration(f, "undoWindow", time.Hour, 366*24*time.Hour); ok {
			pol.UndoWindow = d
		}
	}
	if f, ok := fs["inspectEvery"]; ok {
		if f.value.Kind == yaml.ScalarNode && f.value.Tag == "!!str" && f.value.Value == "off" {
			pol.InspectEvery = 0
		} else if d, ok := p.duration(f, "inspectEvery", MinInspectEvery, 366*24*time.Hour); ok {
			pol.InspectEvery = d
		}
	}
	return pol
}

func (p *parser) retention(v *yaml.Node) Retention {
	if v.Kind != yaml.ScalarNode {
		p.errf(v, "retention must be a preset name or a number of hours")
		return Retention{}
	}
	switch v.Tag {
	case "!!str":
		pr, ok := PresetByName(v.Value)
		if !ok {
			names := make([]string, len(Presets))
			for i, pr := range Presets {
				names[i] = pr.Name
			}
			p.errf(v, "retention %q is not a preset (%s) nor a number of hours", v.Value, strings.Join(names, ", "))
			return Retention{}
		}
		return Retention{Preset: pr.Name, Hours: pr.Hours, Set: true}
	case "!!int", "!!float":
		// What a number of hours may be is the library's one rule (vacuum.RetentionOf), as for
		// RETAIN n HOURS and the CLI's --retain-hours: 0 to a hundred years.
		h, err := strconv.ParseFloat(v.Value, 64)
		if err == nil {
			_, err = vacuum.RetentionOf(h)
		}
		if err != nil {
			p.errf(v, "retention %s hours must be a number from 0 to %d", v.Value, vacuum.MaxRetentionHours)
			return Retention{}
		}
		if n := vacuum.RetentionNote(fmt.Sprintf("line %d: retention %s", v.Line, v.Value), time.Duration(h*float64(time.Hour))); n != "" {
			p.warnings = append(p.warnings, n)
		}
		return Retention{Hours: h, Set: true}
	}
	p.errf(v, "retention must be a preset name or a number of hours")
	return Retention{}
}

func (p *parser) schedule(n *yaml.Node) *Schedule {
	fs := p.fields(n, "schedule", schedKeys...)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	s := &Schedule{}
	var loc *time.Location
	if f, ok := fs["timezone"]; ok {
		if name, ok := p.str(f, "timezone"); ok {
			if name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
				p.errf(f.value, "timezone %q must be an IANA zone name such as Europe/Amsterdam, or UTC", name)
			} else if l, err := time.LoadLocation(name); err != nil {
				p.errf(f.value, "timezone %q is not a known zone (an IANA name such as Europe/Amsterdam, or UTC)", name)
			} else {
				loc, s.TimeZone = l, name
			}
		}
	} else {
		p.errf(n, "schedule: timezone is missing (an IANA name such as Europe/Amsterdam, or UTC): the cron and the window are read in it")
	}
	if f, ok := fs["cron"]; ok {
		if expr, ok := p.str(f, "cron"); ok && loc != nil {
			c, err := schedule.ParseCron(expr, loc)
			if err != nil {
				p.errf(f.value, "%v", err)
			}
			s.Cron = c
		}
	} else {
		p.errf(n, "schedule: cron is missing (five fields: minute hour day-of-month month day-of-week)")
	}
	if f, ok := fs["window"]; ok {
		wf := p.fields(f.value, "window", windowKeys...)
		var w schedule.Window
		okW := f.value.Kind == yaml.MappingNode
		for _, k := range windowKeys {
			g, ok := wf[k]
			if !ok {
				p.errf(f.value, "window: %s is missing (HH:MM)", k)
				okW = false
				continue
			}
			str, ok := p.str(g, "window "+k)
			if !ok {
				okW = false
				continue
			}
			c, err := schedule.ParseClock(str)
			if err != nil {
				p.errf(g.value, "window %s: %v", k, err)
				okW = false
				continue
			}
			if k == "start" {
				w.Start = c
			} else {
				w.End = c
			}
		}
		if okW && w.Start == w.End {
			p.errf(f.value, "window: start and end are both %s; leave the window out to allow any time", w.Start)
			okW = false
		}
		if okW {
			s.Window = &w
		}
	}
	if f, ok := fs["jitter"]; ok {
		if d, ok := p.duration(f, "jitter", 0, 24*time.Hour); ok {
			s.Jitter = d
			if s.Window != nil && d >= s.Window.Length() {
				p.errf(f.value, "jitter %s is not shorter than the window (%s): a run could never start inside it", d, s.Window.Length())
			}
		}
	}
	return s
}
