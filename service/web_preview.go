package service

import (
	"cmp"
	"context"
	"errors"
	"hash/maphash"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// maxPreviews and maxPreviewFiles bound the previews the service keeps for the web page (each
// holds its plan's file list): the oldest is forgotten first (the newest is always kept), and
// its page then asks for a new preview.
const (
	maxPreviews     = 16
	maxPreviewFiles = 2_000_000
)

// webState is what the web page needs kept between requests: the recent previews.
type webState struct {
	mu       sync.Mutex
	previews []*preview // oldest first
}

// preview is one DRY RUN of a table, kept so the page can show it page by page and run
// exactly it (its digest).
type preview struct {
	Table  string
	Digest string
	At     time.Time
	Result *vacuum.Result
	// Folders are the totals per folder (partition) of the table, most bytes to delete
	// first; Kept counts the kept entries of the listing by the planner's rule.
	Folders []folderTotal
	Kept    []ruleCount
	// Observed is false when the planner listed nothing (LITE): Kept is then empty.
	Observed bool
	// Companions counts the checksum companions deleted with the plan's files (not in its
	// files, as VACUUM counts them).
	Companions int64
	// RetainHours is the one-off retention the preview was asked for (nil: the policy's);
	// the run of its plan is made at it too.
	RetainHours *float64
}

func (p *preview) url() string {
	return "/tables/" + url.PathEscape(p.Table) + "/previews/" + p.Digest
}

// folderTotal is what a preview deletes and keeps in one folder.
type folderTotal struct {
	Path        string `json:"path"`
	DeleteFiles int64  `json:"deleteFiles"`
	DeleteBytes int64  `json:"deleteBytes"`
	// DeleteCompanions counts the checksum companions deleted with the files (not among
	// DeleteFiles, nor among the kept files).
	DeleteCompanions int64          `json:"deleteChecksumCompanions,omitempty"`
	KeptFiles        int64          `json:"keptFiles"`
	KeptByRule       map[string]int `json:"keptByRule,omitempty"`
}

// ruleCount is a number of listed files a rule of the planner decided.
type ruleCount struct {
	Rule  string `json:"rule"`
	Files int64  `json:"files"`
	Bytes int64  `json:"bytes"`
}

// previewAnswer is POST /api/tables/{id}/preview: the DRY RUN result, with the digest a run
// request names to execute exactly this plan, and the page that shows it.
type previewAnswer struct {
	*vacuum.Result
	PlanDigest string `json:"planDigest"`
	PreviewURL string `json:"previewUrl"`
	// OneOffRetention: the retention is the one asked for, not the policy's.
	OneOffRetention bool `json:"oneOffRetention"`
}

// folderOf is the folder of a table-relative path ("" for the root).
func folderOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// verdicts sorts the planner's verdicts on the kept entries by folder and rule.
type verdicts struct {
	folders map[string]*folderTotal
	rules   map[vacuum.Rule]*ruleCount
	seen    bool
	// crcs are the hidden checksum companions (.<name>.crc) the planner kept, by the hash of
	// their key: a hidden name is never a candidate, but the plan deletes a companion with
	// its file, and then it is not kept (deleted sorts them out).
	seed maphash.Seed
	crcs []crcSeen
}

// crcSeen is a hidden checksum companion the planner kept: its key's hash and its size (-1
// once found deleted with its file).
type crcSeen struct{ h, size uint64 }

func newVerdicts() *verdicts {
	return &verdicts{folders: map[string]*folderTotal{}, rules: map[vacuum.Rule]*ruleCount{}, seed: maphash.MakeSeed()}
}

// isCompanion: a name of the form of a Hadoop checksum companion.
func isCompanion(key string) bool {
	base := key[strings.LastIndexByte(key, '/')+1:]
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".crc")
}

func (v *verdicts) observe(vd vacuum.Verdict) {
	v.seen = true
	if vd.Object.IsDir || vd.Deletes() {
		return
	}
	if vd.Rule == vacuum.RuleHidden && isCompanion(vd.Object.Key) {
		v.crcs = append(v.crcs, crcSeen{h: maphash.String(v.seed, vd.Object.Key), size: uint64(max(vd.Object.Size, 0))})
	}
	r := v.rules[vd.Rule]
	if r == nil {
		r = &ruleCount{Rule: string(vd.Rule)}
		v.rules[vd.Rule] = r
	}
	r.Files++
	r.Bytes += vd.Object.Size
	ft := v.folder(folderOf(vd.Object.Key))
	ft.KeptFiles++
	if ft.KeptByRule == nil {
		ft.KeptByRule = map[string]int{}
	}
	ft.KeptByRule[string(vd.Rule)]++
}

// deleted counts the companion key, which the plan deletes with its file: deleted, not kept
// (a hidden name the planner's verdict kept).
func (v *verdicts) deleted(key string) {
	ft := v.folder(folderOf(key))
	ft.DeleteCompanions++
	h := maphash.String(v.seed, key)
	i, ok := slices.BinarySearchFunc(v.crcs, h, func(c crcSeen, h uint64) int { return cmp.Compare(c.h, h) })
	if !ok || v.crcs[i].size == ^uint64(0) {
		return // LITE lists nothing, and a companion found late in the listing may be unseen
	}
	size := int64(v.crcs[i].size)
	v.crcs[i].size = ^uint64(0)
	if r := v.rules[vacuum.RuleHidden]; r != nil {
		r.Files--
		r.Bytes -= size
		if r.Files <= 0 {
			delete(v.rules, vacuum.RuleHidden)
		}
	}
	ft.KeptFiles--
	if ft.KeptByRule[string(vacuum.RuleHidden)]--; ft.KeptByRule[string(vacuum.RuleHidden)] <= 0 {
		delete(ft.KeptByRule, string(vacuum.RuleHidden))
	}
}

func (v *verdicts) folder(p string) *folderTotal {
	ft := v.folders[p]
	if ft == nil {
		ft = &folderTotal{Path: p}
		v.folders[p] = ft
	}
	return ft
}

// previewPlan makes the DRY RUN of t's policy (runner.dryRun), at the one-off retention
// oneOff when set, with the planner's verdicts, and keeps it for the page.
func (s *Server) previewPlan(ctx context.Context, t *tables.Table, oneOff *float64) (*preview, error) {
	v := newVerdicts()
	res, err := s.runner.DryRun(ctx, t, v.observe, oneOff)
	if err != nil {
		return nil, err
	}
	if res.Plan == nil {
		return nil, of(errPlan, errors.New("the dry run returned no plan"))
	}
	// What is deleted is the plan's (a nested table found late in the listing takes back a
	// verdict, and a checksum companion goes with its file); what is kept, the planner's
	// verdicts less those.
	slices.SortFunc(v.crcs, func(a, b crcSeen) int { return cmp.Compare(a.h, b.h) })
	var companions int64
	err = res.Files.Each(func(f vacuum.File) error {
		ft := v.folder(folderOf(f.Path))
		ft.DeleteFiles++
		ft.DeleteBytes += f.Size
		if f.Checksum != "" {
			companions++
			v.deleted(f.Checksum)
		}
		return nil
	})
	if err != nil {
		return nil, of(errPlan, err)
	}
	p := &preview{Table: t.Cfg.ID, Digest: vacuum.Digest(res.Plan), At: s.Now(), Result: res, Observed: v.seen, Companions: companions, RetainHours: oneOff}
	for _, ft := range v.folders {
		p.Folders = append(p.Folders, *ft)
	}
	slices.SortFunc(p.Folders, func(a, b folderTotal) int {
		return cmp.Or(cmp.Compare(b.DeleteBytes, a.DeleteBytes), cmp.Compare(b.DeleteFiles, a.DeleteFiles), cmp.Compare(a.Path, b.Path))
	})
	for _, r := range v.rules {
		p.Kept = append(p.Kept, *r)
	}
	slices.SortFunc(p.Kept, func(a, b ruleCount) int { return cmp.Or(cmp.Compare(b.Files, a.Files), cmp.Compare(a.Rule, b.Rule)) })
	s.web.keep(p)
	return p, nil
}

// keep remembers p, forgetting the oldest preview beyond maxPreviews (and an older preview of
// the same plan).
func (w *webState) keep(p *preview) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.previews = slices.DeleteFunc(w.previews, func(q *preview) bool { return q.Table == p.Table && q.Digest == p.Digest })
	w.previews = append(w.previews, p)
	files := 0
	for _, q := range w.previews {
		files += q.Result.Files.Len()
	}
	for len(w.previews) > 1 && (len(w.previews) > maxPreviews || files > maxPreviewFiles) {
		files -= w.previews[0].Result.Files.Len()
		w.previews = w.previews[1:]
	}
}

// find returns the kept preview of table with digest, nil if none.
func (w *webState) find(table, digest string) *preview {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.previews {
		if p.Table == table && p.Digest == digest {
			return p
		}
	}
	return nil
}
