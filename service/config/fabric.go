package config

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Fabric is what the service needs to answer Fabric's Table Maintenance job API
// (docs/fabric.md): the lakehouses a job may name, by their workspace and item ids, and where
// each lies in OneLake.
type Fabric struct {
	// BaseURL, when set, is the base of the Location headers the job API answers with
	// (https://vacuum.example.com behind a proxy); without it, the request's own scheme and
	// Host.
	BaseURL    string
	Lakehouses []Lakehouse
	Line       int
}

// Lakehouse maps a Fabric lakehouse's ids to its location. A job names its table as Fabric
// does (tableName, and schemaName in a lakehouse with schemas): the table under Root's
// Tables/ folder, which the service must maintain (a table of the file, or one a discover
// root found).
type Lakehouse struct {
	// WorkspaceID and LakehouseID are GUIDs, kept in lower case.
	WorkspaceID string
	LakehouseID string
	// Root is the lakehouse's folder: abfss://WS@onelake.dfs.fabric.microsoft.com/LH.Lakehouse.
	Root string
	Line int
}

// Lakehouse returns the lakehouse of the two ids (compared as GUIDs, in any case).
func (f *Fabric) Lakehouse(workspaceID, lakehouseID string) (*Lakehouse, bool) {
	if f == nil {
		return nil, false
	}
	for i := range f.Lakehouses {
		l := &f.Lakehouses[i]
		if strings.EqualFold(l.WorkspaceID, workspaceID) && strings.EqualFold(l.LakehouseID, lakehouseID) {
			return l, true
		}
	}
	return nil, false
}

var (
	fabricKeys    = []string{"baseUrl", "lakehouses"}
	lakehouseKeys = []string{"workspaceId", "lakehouseId", "root"}
	// guidPattern is a GUID as Fabric writes one: 8-4-4-4-12 hexadecimal digits, no braces.
	guidPattern = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
)

// ValidGUID reports whether s is a GUID as Fabric writes one (in any case).
func ValidGUID(s string) bool { return guidPattern.MatchString(s) }

const nilGUID = "00000000-0000-0000-0000-000000000000"

func (p *parser) fabric(f field) *Fabric {
	n := f.value
	fs := p.fields(n, "fabric", fabricKeys...)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	fab := &Fabric{Line: n.Line}
	if g, ok := fs["baseUrl"]; ok {
		if s, ok := p.str(g, "fabric baseUrl"); ok {
			if msg := checkBaseURL(s); msg != "" {
				p.errf(g.value, "fabric baseUrl %q: %s", s, msg)
			} else {
				fab.BaseURL = strings.TrimSuffix(s, "/")
			}
		}
	}
	g, ok := fs["lakehouses"]
	if !ok {
		p.errf(n, "fabric: lakehouses is missing (- {workspaceId: GUID, lakehouseId: GUID, root: abfss://…/LH.Lakehouse})")
		return fab
	}
	if g.value.Kind != yaml.SequenceNode || len(g.value.Content) == 0 {
		p.errf(g.value, "fabric lakehouses must be a list of at least one lakehouse (- {workspaceId: GUID, lakehouseId: GUID, root: …})")
		return fab
	}
	ids, roots := map[string]int{}, map[string]int{}
	for _, ln := range g.value.Content {
		l, ok := p.lakehouse(ln)
		if !ok {
			continue
		}
		// A lakehouse's id is a GUID: the same one in two workspaces is a mistake.
		if line, dup := ids[l.LakehouseID]; dup {
			p.errf(ln, "fabric lakehouse %s is already given on line %d", l.LakehouseID, line)
			continue
		}
		if line, dup := roots[LocationKey(l.Root)]; dup {
			p.errf(ln, "fabric lakehouse %s: root %s is the lakehouse of line %d (under other ids): give each lakehouse once", l.LakehouseID, l.Root, line)
			continue
		}
		ids[l.LakehouseID], roots[LocationKey(l.Root)] = l.Line, l.Line
		fab.Lakehouses = append(fab.Lakehouses, l)
	}
	return fab
}

func (p *parser) lakehouse(n *yaml.Node) (Lakehouse, bool) {
	l := Lakehouse{Line: n.Line}
	before := len(p.problems)
	fs := p.fields(n, "fabric lakehouse", lakehouseKeys...)
	if n.Kind != yaml.MappingNode {
		return l, false
	}
	for _, k := range []string{"workspaceId", "lakehouseId"} {
		f, ok := fs[k]
		if !ok {
			p.errf(n, "fabric lakehouse (line %d): %s is missing (a GUID, as Fabric shows it in the lakehouse's URL)", n.Line, k)
			continue
		}
		s, ok := p.str(f, k)
		if !ok {
			continue
		}
		switch {
		case !ValidGUID(s):
			p.errf(f.value, "fabric lakehouse %s %q is not a GUID (8-4-4-4-12 hexadecimal digits, as in 4b218778-e7a5-4d73-8187-f10824047715)", k, s)
			continue
		case s == nilGUID:
			p.errf(f.value, "fabric lakehouse %s is the nil GUID, which names nothing", k)
			continue
		}
		if k == "workspaceId" {
			l.WorkspaceID = strings.ToLower(s)
		} else {
			l.LakehouseID = strings.ToLower(s)
		}
	}
	if f, ok := fs["root"]; ok {
		if s, ok := p.str(f, "root"); ok {
			p.location(f.value, "fabric lakehouse root", s)
			l.Root = strings.TrimSuffix(s, "/")
		}
	} else {
		p.errf(n, "fabric lakehouse (line %d): root is missing (the lakehouse's folder: abfss://WS@onelake.dfs.fabric.microsoft.com/LH.Lakehouse)", n.Line)
	}
	return l, len(p.problems) == before
}

// checkBaseURL refuses a base the Location headers cannot be built on.
func checkBaseURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return "give an absolute http(s) URL (https://vacuum.example.com)"
	case u.User != nil:
		return "a user or password in the URL is refused"
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		return "a query or fragment is refused: the job API's paths go after it"
	}
	return ""
}

// fabricWarnings warns of a lakehouse under which the file maintains no table: every job of it
// would be refused as an unknown table.
func (p *parser) fabricWarnings(cfg *Config) {
	if cfg.Fabric == nil {
		return
	}
	for _, l := range cfg.Fabric.Lakehouses {
		root := LocationKey(l.Root)
		found := false
		for _, t := range cfg.Tables {
			found = found || (t.Path != "" && strings.HasPrefix(LocationKey(t.Path), root+"/Tables/")) ||
				(t.Warehouse != "" && LocationKey(t.Warehouse) == root)
		}
		for _, d := range cfg.Discover {
			k := LocationKey(d.Root)
			found = found || k == root || strings.HasPrefix(root, k+"/") || strings.HasPrefix(k, root+"/")
		}
		if !found {
			p.warnings = append(p.warnings, "line "+strconv.Itoa(l.Line)+": fabric lakehouse "+l.LakehouseID+": no table of this file lies under "+l.Root+
				"/Tables/, nor a discover root: every job of it will be refused (ItemNotFound); add a discover entry with root: "+l.Root)
		}
	}
}
