package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// DefaultStaleRunAfter is how long a RUNNING run record may go without a heartbeat before the
// service takes it for the record of a process that died.
const DefaultStaleRunAfter = 15 * time.Minute

// Discover is a lakehouse or warehouse root: every Delta table below it is maintained with
// the same policy and schedule, and the list is refreshed every Refresh.
type Discover struct {
	// ID prefixes the ids of the tables found (see service.DiscoveredID).
	ID   string
	Root string
	// Refresh is how often the root is listed again.
	Refresh        time.Duration
	Policy         Policy
	Schedule       *Schedule
	DryRunOnly     bool
	StorageOptions map[string]EnvRef
	Line           int
}

// Table returns the table found at path (a location below the root) under id.
func (d *Discover) Table(id, path string) Table {
	return Table{ID: id, Path: path, Policy: d.Policy, Schedule: d.Schedule, DryRunOnly: d.DryRunOnly, StorageOptions: d.StorageOptions, Root: d.Root, Line: d.Line}
}

// Store is a limit on the requests of the tables whose location starts with Prefix.
type Store struct {
	Prefix            string
	RequestsPerSecond float64
	// Burst is how many requests may go at once after a quiet moment (default: the rate,
	// rounded up).
	Burst int
	Line  int
}

// Webhook is where failed runs are posted.
type Webhook struct {
	// URL is written in the file (an https URL, or http to a loopback address), or read from
	// the environment variable URLEnv (the URL may carry a secret).
	URL    string
	URLEnv EnvRef
	// On are the events posted: "failed" (a run that failed) and "untracked.grew" (a run that
	// found more untracked files than the run before); both by default.
	On []string
}

// ResolveURL returns the webhook URL, checked as one written in the file is.
func (w *Webhook) ResolveURL(getenv func(string) string) (string, error) {
	if w.URLEnv == "" {
		return w.URL, nil
	}
	v, err := w.URLEnv.Resolve(getenv)
	if err != nil {
		return "", fmt.Errorf("webhook url: %w", err)
	}
	if msg := checkWebhookURL(v); msg != "" {
		return "", fmt.Errorf("webhook url (environment variable %s): %s", string(w.URLEnv), msg)
	}
	return v, nil
}

var (
	discoverKeys = []string{"id", "root", "refresh", "policy", "schedule", "dryRunOnly", "storageOptions"}
	storeKeys    = []string{"prefix", "requestsPerSecond", "burst"}
	webhookKeys  = []string{"url", "on"}
)

// ops parses the keys of the operations side: discover, stores, webhook, staleRunAfter.
func (p *parser) ops(fs map[string]field, cfg *Config) {
	cfg.StaleRunAfter = DefaultStaleRunAfter
	if f, ok := fs["staleRunAfter"]; ok {
		if d, ok := p.duration(f, "staleRunAfter", 3*time.Minute, 7*24*time.Hour); ok {
			cfg.StaleRunAfter = d
		}
	}
	if f, ok := fs["discover"]; ok {
		if f.value.Kind != yaml.SequenceNode || len(f.value.Content) == 0 {
			p.errf(f.value, "discover must be a list of roots (- id: lake, root: s3://bucket/warehouse, refresh: 1h)")
		} else {
			seen := map[string]int{}
			for _, n := range f.value.Content {
				d, ok := p.discover(n)
				if !ok {
					continue
				}
				key := strings.ToLower(d.ID)
				if line, dup := seen[key]; dup {
					p.errf(n, "discover id %q is already used on line %d: ids must be unique (case-insensitively)", d.ID, line)
					continue
				}
				seen[key] = d.Line
				cfg.Discover = append(cfg.Discover, d)
			}
		}
	}
	if f, ok := fs["stores"]; ok {
		if f.value.Kind != yaml.SequenceNode || len(f.value.Content) == 0 {
			p.errf(f.value, "stores must be a list (- prefix: s3://bucket/, requestsPerSecond: 50)")
		} else {
			seen := map[string]int{}
			for _, n := range f.value.Content {
				s, ok := p.store(n)
				if !ok {
					continue
				}
				if line, dup := seen[s.Prefix]; dup {
					p.errf(n, "store prefix %s is already given on line %d", s.Prefix, line)
					continue
				}
				seen[s.Prefix] = s.Line
				cfg.Stores = append(cfg.Stores, s)
			}
		}
	}
	if f, ok := fs["webhook"]; ok {
		cfg.Webhook = p.webhook(f.value)
	}
}

func (p *parser) discover(n *yaml.Node) (Discover, bool) {
	d := Discover{Line: n.Line, Policy: defaultPolicy()}
	before := len(p.problems)
	fs := p.fields(n, "discover", discoverKeys...)
	if n.Kind != yaml.MappingNode {
		return d, false
	}
	if f, ok := fs["id"]; ok {
		if s, ok := p.str(f, "id"); ok {
			if !idPattern.MatchString(s) || len(s) > 64 {
				p.errf(f.value, "discover id %q must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)", s)
			}
			d.ID = s
		}
	} else {
		p.errf(n, "discover (line %d): id is missing (it prefixes the ids of the tables found)", n.Line)
	}
	if f, ok := fs["root"]; ok {
		if s, ok := p.str(f, "root"); ok {
			p.location(f.value, "root", s)
			d.Root = s
		}
	} else {
		p.errf(n, "discover (line %d): root is missing (the lakehouse or warehouse folder to list)", n.Line)
	}
	if f, ok := fs["refresh"]; ok {
		if r, ok := p.duration(f, "refresh", time.Minute, 31*24*time.Hour); ok {
			d.Refresh = r
		}
	} else {
		p.errf(n, "discover (line %d): refresh is missing (how often the root is listed again, e.g. 1h)", n.Line)
	}
	p.settings(fs, &d.Policy, &d.Schedule, &d.DryRunOnly, &d.StorageOptions)
	return d, len(p.problems) == before
}

func (p *parser) store(n *yaml.Node) (Store, bool) {
	s := Store{Line: n.Line}
	before := len(p.problems)
	fs := p.fields(n, "store", storeKeys...)
	if n.Kind != yaml.MappingNode {
		return s, false
	}
	if f, ok := fs["prefix"]; ok {
		if v, ok := p.str(f, "prefix"); ok {
			s.Prefix = v
			p.location(f.value, "prefix", v)
			if k, err := location.Kind(v); err == nil && k == "local" {
				p.errf(f.value, "store prefix %s is on local disk: requestsPerSecond limits the requests to an object store (s3://, abfss://, gs://, ...)", v)
			}
		}
	} else {
		p.errf(n, "store (line %d): prefix is missing (the location prefix of the tables it limits, e.g. s3://bucket/)", n.Line)
	}
	if f, ok := fs["requestsPerSecond"]; ok {
		v := f.value
		r, err := strconv.ParseFloat(v.Value, 64)
		switch {
		case v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float"):
			p.errf(v, "requestsPerSecond must be a number")
		case err != nil || math.IsNaN(r) || math.IsInf(r, 0) || r < 0.1 || r > 100000:
			p.errf(v, "requestsPerSecond %s must be from 0.1 to 100000", v.Value)
		default:
			s.RequestsPerSecond = r
		}
	} else {
		p.errf(n, "store (line %d): requestsPerSecond is missing", n.Line)
	}
	if f, ok := fs["burst"]; ok {
		if b, ok := p.integer(f, "burst", 1, 100000); ok {
			s.Burst = b
		}
	} else if s.RequestsPerSecond > 0 {
		s.Burst = int(math.Ceil(s.RequestsPerSecond))
	}
	return s, len(p.problems) == before
}

func (p *parser) webhook(n *yaml.Node) *Webhook {
	w := &Webhook{On: []string{"failed", "untracked.grew"}}
	fs := p.fields(n, "webhook", webhookKeys...)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if f, ok := fs["url"]; ok {
		if v := f.value; v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, "${") {
			if r, ok := p.envRef(f, "webhook url"); ok {
				w.URLEnv = r
			}
		} else if s, ok := p.str(f, "webhook url"); ok {
			if msg := checkWebhookURL(s); msg != "" {
				p.errf(f.value, "webhook url: %s", msg)
			} else {
				w.URL = s
			}
		}
	} else {
		p.errf(n, "webhook: url is missing (https://…, or ${ENV_VAR} when it carries a secret)")
	}
	if f, ok := fs["on"]; ok {
		w.On = nil
		if f.value.Kind != yaml.SequenceNode || len(f.value.Content) == 0 {
			p.errf(f.value, "webhook on must be a list of events: [failed, untracked.grew]")
		}
		for _, c := range f.value.Content {
			if c.Kind != yaml.ScalarNode || c.Tag != "!!str" || (c.Value != "failed" && c.Value != "untracked.grew") {
				p.errf(c, "webhook on: %q is not an event that is posted (failed, untracked.grew)", c.Value)
				continue
			}
			w.On = append(w.On, c.Value)
		}
	}
	return w
}

// checkWebhookURL refuses a URL the service must not post to; the message never echoes a
// query or a password (the secret of many webhooks).
func checkWebhookURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "not an absolute http(s) URL"
	}
	switch u.Scheme {
	case "https":
	case "http":
		host := u.Hostname()
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "http:// is accepted only to a loopback address; use https:// (the body names tables and errors)"
		}
	default:
		return fmt.Sprintf("scheme %q is refused: use https:// (or http:// to a loopback address)", u.Scheme)
	}
	if u.User != nil {
		return "a user or password in the URL is refused: put a URL that carries a secret in an environment variable (url: ${WEBHOOK_URL})"
	}
	return ""
}

// settings parses the keys a table and a discover root share: policy, schedule, dryRunOnly
// and storageOptions.
func (p *parser) settings(fs map[string]field, pol *Policy, sched **Schedule, dry *bool, opts *map[string]EnvRef) {
	if f, ok := fs["policy"]; ok {
		*pol = p.policy(f.value)
	}
	if f, ok := fs["schedule"]; ok {
		*sched = p.schedule(f.value)
	}
	if f, ok := fs["dryRunOnly"]; ok {
		*dry, _ = p.boolean(f, "dryRunOnly")
	}
	if f, ok := fs["storageOptions"]; ok {
		*opts = p.storageOptions(f, "storageOptions")
	}
}
