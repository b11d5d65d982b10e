package service

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The words of the pages, in one place: every string a page shows (its templates, its script,
// and the Go that fills them) is a message here, keyed by id, in each language of the pages
// (messagesEN here, messagesPT in messages_pt.go: the same ids, which TestCatalogue checks). A
// message names its values in braces ({files}); a count has two forms, ID.one and ID.other, of
// which plural picks one (and sets {n}). A locale also writes numbers, sizes, amounts and time
// stamps as its language does; the page's language is chosen per request (locale.go). The
// JSON API and the webhook speak English (english).

// locale is one language of the pages: its catalogue, how it writes numbers and time stamps,
// and the page templates, their functions bound to it.
type locale struct {
	tag      string // BCP 47, as <html lang> and Content-Language say it
	messages map[string]string
	// group separates thousands, decimal marks the fraction.
	group, decimal string
	// stamp is the layout of a time stamp to the second (then " UTC"), minute to the minute.
	stamp, minute string
	pages         *template.Template
}

var (
	english    = &locale{tag: "en", messages: messagesEN, group: ",", decimal: ".", stamp: "2006-01-02 15:04:05", minute: "2006-01-02 15:04"}
	portuguese = &locale{tag: "pt-BR", messages: messagesPT, group: ".", decimal: ",", stamp: "02/01/2006 15:04:05", minute: "02/01/2006 15:04"}
	// locales are the languages of the pages, the default first.
	locales = []*locale{english, portuguese}
)

func init() {
	for _, l := range locales {
		l.pages = template.Must(template.New("").Funcs(l.funcs()).ParseFS(webFiles, "web/templates/*.html"))
	}
}

// placeholder is a value's place in a message.
var placeholder = regexp.MustCompile(`\{[a-zA-Z0-9]+\}`)

// text is english.text: the words of the API (an undo offer's why).
func text(id string, kv ...any) string { return english.text(id, kv...) }

// text returns message id with its values (kv: name, value, name, value…) as plain text: a
// number is written as the locale writes it. An unknown id is returned in brackets, so that
// a missing message shows (and the catalogue's test fails) rather than an empty place.
func (l *locale) text(id string, kv ...any) string {
	m, ok := l.messages[id]
	if !ok {
		return "[" + id + "]"
	}
	vals := values(kv)
	return placeholder.ReplaceAllStringFunc(m, func(p string) string {
		v, ok := vals[p[1:len(p)-1]]
		if !ok {
			return p
		}
		switch x := v.(type) {
		case template.HTML:
			return string(x)
		case string:
			return x
		}
		return l.plainValue(v)
	})
}

// markup returns message id with its values as HTML: the message and every value escaped,
// except a value that is template.HTML already (a link, a time stamp), which is kept.
func (l *locale) markup(id string, kv ...any) template.HTML {
	m, ok := l.messages[id]
	if !ok {
		return template.HTML(html.EscapeString("[" + id + "]"))
	}
	vals := values(kv)
	var b strings.Builder
	last := 0
	for _, loc := range placeholder.FindAllStringIndex(m, -1) {
		b.WriteString(html.EscapeString(m[last:loc[0]]))
		name := m[loc[0]+1 : loc[1]-1]
		v, ok := vals[name]
		switch x := v.(type) {
		case template.HTML:
			b.WriteString(string(x))
		case string:
			b.WriteString(html.EscapeString(x))
		case time.Time, *time.Time:
			b.WriteString(string(l.whenHTML(x)))
		default:
			if ok {
				b.WriteString(html.EscapeString(l.plainValue(v)))
			} else {
				b.WriteString(html.EscapeString(m[loc[0]:loc[1]]))
			}
		}
		last = loc[1]
	}
	b.WriteString(html.EscapeString(m[last:]))
	return template.HTML(b.String())
}

// pluralID is the form of message id for the count n: id.one for 1, id.other otherwise (in
// both languages: Brazilian usage says "0 arquivos", as English says "0 files").
func pluralID(id string, n int64) string {
	if n == 1 {
		return id + ".one"
	}
	return id + ".other"
}

// plural is markup of the form of id for n, with {n} set to n.
func (l *locale) plural(id string, n int64, kv ...any) template.HTML {
	return l.markup(pluralID(id, n), append([]any{"n", n}, kv...)...)
}

func values(kv []any) map[string]any {
	vals := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			vals[k] = kv[i+1]
		}
	}
	return vals
}

func (l *locale) plainValue(v any) string {
	switch x := v.(type) {
	case int:
		return l.count(int64(x))
	case int64:
		return l.count(x)
	case float64:
		return l.number(x, -1, false)
	case time.Time, *time.Time:
		return l.when(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// scriptMessages are the messages the page's script uses (ids starting with "js.", the
// states, and the details of a run in progress, which the run page's script keeps in step with
// its state): the layout gives them to it in a data attribute.
func (l *locale) scriptMessages() map[string]string {
	out := map[string]string{}
	for k, v := range l.messages {
		if strings.HasPrefix(k, "js.") || strings.HasPrefix(k, "state.") || k == "detail.planned" || k == "detail.running" {
			out[k] = v
		}
	}
	return out
}

// scriptMessagesJSON is scriptMessages as JSON, for the layout's data attribute.
func (l *locale) scriptMessagesJSON() string {
	b, _ := json.Marshal(l.scriptMessages())
	return string(b)
}

// pluralAny is plural for a count of any integer type (the templates').
func (l *locale) pluralAny(id string, n any, kv ...any) template.HTML {
	switch x := n.(type) {
	case int:
		return l.plural(id, int64(x), kv...)
	case int64:
		return l.plural(id, x, kv...)
	}
	return l.markup(id + ".other")
}

// filesHTML says n files and, when there are any, the checksum companions that go with
// them: "4 files (+1 checksum companion)". The companions are never counted as files: a
// run counts its files without them, as VACUUM does.
func (l *locale) filesHTML(n, companions int64) template.HTML {
	if companions <= 0 {
		return l.plural("n.files", n)
	}
	return l.markup("files.with.companions", "files", l.plural("n.files", n), "companions", l.plural("n.companions", companions))
}

// whenHTML is a time stamp that never breaks across lines: <time> (the style sheet keeps it
// on one line), in UTC to the second; nothing for the zero time.
func (l *locale) whenHTML(v any) template.HTML {
	s := l.when(v)
	if s == "" {
		return ""
	}
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		t = *x
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `">` + html.EscapeString(s) + `</time>`)
}

// when is a time in UTC, to the second, as the locale writes a date; "" for the zero time.
func (l *locale) when(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return ""
		}
		t = *x
	}
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(l.stamp) + " UTC"
}

// rawHTML is text the catalogue cannot hold, shown as it is, marked as such: an error of the
// table's store or of the library (in English, with the paths and names it names). The pages
// put it beside words of the catalogue that say what it is; TestPagesSpeakTheCatalogue passes
// over it and nothing else.
func rawHTML(s string) template.HTML {
	if s == "" {
		return ""
	}
	return template.HTML(`<span class="raw" lang="en" translate="no" data-raw>` + html.EscapeString(s) + `</span>`)
}

// oneOffID is the message that says where a run's one-off retention came from.
func oneOffID(from string) string {
	switch from {
	case runner.OneOffPreview:
		return "run.oneoff.preview"
	case runner.OneOffFabric:
		return "run.oneoff.fabric"
	}
	return "run.oneoff"
}

// recoveryText says what the table's store keeps of a deleted file, from what the run record
// says of it (its kind and days, not the store's own words, which are the API's) and where the
// table is (local disk, memory, an object store).
func (l *locale) recoveryText(rec storage.Recovery, location string) string {
	switch rec.Kind {
	case storage.RecoveryNone:
		switch {
		case strings.HasPrefix(location, "mem://"):
			return l.text("recovery.none.memory")
		case location != "" && (!strings.Contains(location, "://") || strings.HasPrefix(location, "file://")):
			return l.text("recovery.none.local")
		}
		return l.text("recovery.none")
	case storage.RecoveryVersioning, storage.RecoverySoftDelete:
		return l.text("recovery."+rec.Kind, "days", rec.Days)
	}
	return l.text("recovery.unknown")
}

// planNotes are the notes of a preview's plan, in the page's words: the planner decides
// (vacuum.RetentionNote: a retention of 2555 hours taken for seven years), the catalogue says
// it; a note the page has no words for is counted, and the API has it.
func (l *locale) planNotes(res *vacuum.Result, table string) []template.HTML {
	if res == nil || res.Plan == nil {
		return nil
	}
	var out []template.HTML
	pl := res.Plan
	if pl.RetentionSpecified && vacuum.RetentionNote("x", time.Duration(pl.RetentionHours*float64(time.Hour))) != "" {
		out = append(out, l.markup("preview.retention.trap", "what", l.text("preview.retention.what.run", "hours", pl.RetentionHours), "hours", vacuum.SevenYearsHours))
	}
	if vacuum.RetentionNote("x", time.Duration(pl.TableRetentionHours*float64(time.Hour))) != "" {
		out = append(out, l.markup("preview.retention.trap", "what", l.text("preview.retention.what.table"), "hours", vacuum.SevenYearsHours))
	}
	if more := len(res.Warnings) - len(out); more > 0 {
		out = append(out, l.plural("preview.notes.more", int64(more), "table", table, "digest", vacuum.Digest(pl)))
	}
	return out
}

// nowrapHTML is s kept on one line (an id is one token).
func nowrapHTML(s string) template.HTML {
	return template.HTML(`<span class="nowrap">` + html.EscapeString(s) + `</span>`)
}

// hoursText is a number of hours: "72 h", "36.5 h" ("36,5 h").
func (l *locale) hoursText(h float64) string {
	return l.text("dur.h", "n", l.number(h, -1, false))
}

// durationText says a duration (time.Duration, or its String form as the API lists it) in
// hours, minutes and seconds, as a person writes it: "24 h", "1 h 30 min", "20 min".
func (l *locale) durationText(v any) string {
	var d time.Duration
	switch x := v.(type) {
	case time.Duration:
		d = x
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			return x
		}
	default:
		return fmt.Sprint(v)
	}
	var parts []string
	h, m, sec := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	if h > 0 {
		parts = append(parts, l.text("dur.h", "n", h))
	}
	if m > 0 {
		parts = append(parts, l.text("dur.min", "n", m))
	}
	if sec > 0 || len(parts) == 0 {
		parts = append(parts, l.text("dur.s", "n", sec))
	}
	return strings.Join(parts, " ")
}

// stateHTML is the badge of a run's state (package run's states, and the service's planned).
func (l *locale) stateHTML(state string) template.HTML {
	class := strings.ReplaceAll(state, " ", "-")
	return template.HTML(`<span class="state state-` + html.EscapeString(class) + `" data-state="` + html.EscapeString(state) + `">` +
		html.EscapeString(l.text("state."+state)) + `</span>`)
}

// reasonHTML says in words why a preview deletes f, with its age against the cutoff.
func (l *locale) reasonHTML(f vacuum.File, cutoff time.Time) template.HTML {
	words := l.markup("reason." + string(f.Reason))
	if f.ModificationTime.IsZero() {
		return words
	}
	return words + template.HTML(`<div class="sub">`) + l.markup("reason.age", "modified", f.ModificationTime, "cutoff", cutoff) + template.HTML(`</div>`)
}

// presetText names in words the table types a what-if retention suits (insight's presets,
// joined by ", ").
func (l *locale) presetText(preset string) string {
	if preset == "" {
		return ""
	}
	var out []string
	for _, p := range strings.Split(preset, ", ") {
		out = append(out, l.text("preset."+p))
	}
	return strings.Join(out, l.text("list.sep"))
}

// linkHTML is a link to a page elsewhere (opened apart, without a referrer).
func linkHTML(href, label string) template.HTML {
	if !strings.HasPrefix(href, "https://") {
		return template.HTML(html.EscapeString(label))
	}
	return template.HTML(`<a href="` + html.EscapeString(href) + `" rel="noreferrer noopener" target="_blank">` + html.EscapeString(label) + `</a>`)
}

// offerWhy says in words why an undo is, or is not, offered for the run d (in the API's
// English: the pages say it from the reason).
func offerWhy(o runner.UndoOffer, d runner.RunDoc) string {
	detail := d.Recovery().Detail
	if d.Undo != nil && detail == "" {
		detail = d.Undo.Why
	}
	return text("undo."+o.Reason, "detail", detail, "error", d.StateDetail, "at", d.PurgedAt())
}

// count is n with thousands separated.
func (l *locale) count(n int64) string {
	return l.number(float64(n), 0, true)
}

// number writes f with digits after the decimal mark (-1: as many as it takes), the
// thousands separated when group is set.
func (l *locale) number(f float64, digits int, group bool) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', digits, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(whole) {
		if group && i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(l.group)
		}
		b.WriteByte(whole[i])
	}
	if hasFrac {
		b.WriteString(l.decimal)
		b.WriteString(frac)
	}
	return b.String()
}

// bytes is n in binary units: "512 B", "1.5 KiB" ("1,5 KiB").
func (l *locale) bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), 0
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for math.Abs(f) >= unit && i < len(units)-1 {
		f /= unit
		i++
	}
	return l.number(f, 1, false) + " " + units[i]
}

// money is an amount in the price's currency: cents, and "< 0.01" for less than a cent.
func (l *locale) money(v float64, p insight.Price) string {
	if v > 0 && v < 0.01 {
		return "< " + l.currency(p) + " " + l.number(0.01, 2, false)
	}
	return l.currency(p) + " " + l.number(v, 2, true)
}

// unitPrice is the price of a GB-month, as precise as it was given.
func (l *locale) unitPrice(p insight.Price) string {
	return l.currency(p) + " " + l.number(p.PerGBMonth, -1, false)
}

// currency is the price's currency as the language writes it (US$ in Brazil), its code when
// the catalogue has no word for it.
func (l *locale) currency(p insight.Price) string {
	if _, ok := l.messages["currency."+p.Currency]; ok {
		return l.text("currency." + p.Currency)
	}
	return p.Currency
}

// humanBytes is english's bytes (the webhook's).
func humanBytes(n int64) string { return english.bytes(n) }

// shareText is a share in percent, one decimal: "12.5" ("12,5").
func (l *locale) shareText(share float64) string { return l.number(share, 1, false) }

// messagesEN is the English catalogue.
var messagesEN = map[string]string{
	"lang": "en",
	// The language switch names each language in itself.
	"lang.name":   "English",
	"lang.switch": "Language",

	// The layout.
	"nav.tables": "Tables",
	"nav.runs":   "Runs",
	"nav.logout": "Log out",
	"foot":       "deltavacuum serve · metrics at /metrics · the API: docs/openapi.yaml",
	"list.sep":   ", ",

	// Counts: .one for 1, .other for any other number.
	"n.files.one":           "1 file",
	"n.files.other":         "{n} files",
	"n.companions.one":      "1 checksum companion",
	"n.companions.other":    "{n} checksum companions",
	"files.with.companions": "{files} (+{companions})",
	"n.dirs.one":            "1 directory",
	"n.dirs.other":          "{n} directories",
	"dur.h":                 "{n} h",
	"dur.min":               "{n} min",
	"dur.s":                 "{n} s",

	// Column headers (and the labels of a table's cells on a phone).
	"col.table":       "Table",
	"col.live":        "Live",
	"col.reclaimable": "Reclaimable now",
	"col.cost":        "Cost / month",
	"col.lastrun":     "Last run",
	"col.nextrun":     "Next run",
	"col.status":      "Status",
	"col.run":         "Run",
	"col.state":       "State",
	"col.started":     "Started",
	"col.duration":    "Duration",
	"col.files":       "Files",
	"col.bytes":       "Bytes",
	"col.undo":        "Undo",
	"col.trigger":     "Trigger",
	"col.retention":   "Retention",
	"col.preset":      "Preset",
	"col.timetravel":  "Time travel back to",
	"col.safety":      "Safety check",
	"col.version":     "Version",
	"col.time":        "Time",
	"col.operation":   "Operation",
	"col.parameters":  "Parameters",
	"col.metrics":     "Metrics",
	"col.folder":      "Folder (partition)",
	"col.todelete":    "To delete",
	"col.tomove":      "To move to the trash",
	"col.kept":        "Kept",
	"col.path":        "Path",
	"col.size":        "Size",
	"col.reason":      "Why",
	"col.outcome":     "Outcome",

	// The price: one line, with links.
	"price.line":    "Costs at {price} per GB-month: the 2024 list price of {s3} and {onelake} (serve has no price setting; check your provider's).",
	"price.s3":      "Amazon S3 Standard",
	"price.onelake": "Microsoft OneLake",
	// Currencies, as the language writes them before an amount.
	"currency.USD": "USD",

	// The charts.
	"chart.live":           "live bytes",
	"chart.reclaimable":    "reclaimable bytes",
	"chart.bytes.title":    "Live and reclaimable bytes at each inspection",
	"chart.forecast":       "reclaimable bytes, forecast (no new commits)",
	"chart.forecast.title": "Forecast of the reclaimable bytes",
	"chart.folders.title":  "bytes to delete by folder",
	"bar.label":            "{share}% of the bytes is reclaimable now",
	"bar.title":            "live {live}, reclaimable now {reclaimable}",

	// The legends of the bars.
	"legend.live":        "live bytes",
	"legend.reclaimable": "reclaimable now",
	"legend.deleted":     "bytes to delete",
	"legend.moved":       "bytes to move to the trash",

	// A table's status.
	"status.busy":         "busy",
	"status.idle":         "idle",
	"status.broken":       "broken",
	"table.broken.reason": "Broken: {reason}",
	"table.broken.at":     "seen {at}; the service looks again every hour, and at each run, preview and inspection",
	"table.broken.banner": "This table is broken: it cannot be opened, or its log cannot be read ({reason}; seen {at}). Runs, previews and inspections of it fail until that is fixed.",
	"status.dryrunonly":   "dry run only",
	"status.run":          "run {id}",
	"status.undo":         "undo of {run}",
	"status.purge":        "trash purge",

	// The tables page.
	"tables.title":        "Tables",
	"tables.notinspected": "not inspected yet",
	"tables.norun":        "none",
	"tables.nosched":      "scheduler not started",
	"tables.noschedule":   "no schedule",
	"tables.none":         "No tables are configured.",

	// The table page.
	"table.title":                 "Table {id}",
	"table.preview":               "Preview (DRY RUN)",
	"table.inspect":               "Inspect now",
	"table.storage":               "Storage over time",
	"table.retention.label":       "at a retention of",
	"table.retention.placeholder": "the policy's",
	"table.retention.help":        "Hours, for this preview and the run of its plan only; empty: the policy's. Never below a retention the table sets itself; below the table's retention, the safety check refuses it unless the policy turned the check off.",
	"table.figures":               "Live {live} ({livefiles}) · reclaimable now {reclaimable} ({reclaimablefiles}) at a retention of {retention}, {cost} per month · inspected {at}, version {version}",
	"table.chart.note":            "Each inspection adds a point: after every run and every undo, on the policy's period, and Inspect now.",
	"table.forecast":              "Forecast",
	"table.notinspected":          "Not inspected yet: Inspect now records the figures, and each inspection adds a point.",
	"table.policy":                "Policy and schedule",
	"table.runs":                  "Runs",
	"readers.title":               "Readers",
	"readers.help":                "Who reads the table beside its current version: pins, registered streaming queries, Iceberg metadata in its folder, shallow clones among the tables found beside it. VACUUM keeps every file each still needs, whatever its age.",
	"readers.none":                "No reader was found at the last inspection: VACUUM keeps only what the retention keeps.",
	"readers.iceberg":             "Iceberg metadata is in the table's folder (kept whole, its snapshot's files kept):",
	"readers.iceberg.lag":         "Iceberg metadata is in the table's folder, {versions} versions and {hours} behind the Delta table (kept whole, its snapshot's files kept):",
	"readers.othervacuum":         "Another engine vacuumed this table without honouring its pins or streaming queries:",
	"reader.kind.pin":             "pin",
	"reader.kind.streaming":       "streaming query",
	"reader.kind.iceberg":         "Iceberg",
	"reader.kind.clone":           "shallow clone",
	"col.kind":                    "Kind",
	"col.keptalone":               "Kept for it alone",
	"col.until":                   "Until",
	"col.reader":                  "Reader",
	"pins.title":                  "Pins",
	"pins.broken":                 "The pins cannot be read while the table is broken (see above).",
	"pins.none":                   "No pins.",
	"pins.version":                "Version",
	"pins.version.placeholder":    "the current one",
	"pins.hours":                  "Hours",
	"pins.reason":                 "Reason",
	"pins.create":                 "Pin",
	"pins.unpin":                  "Unpin",
	"pins.only":                   "Only deltavacuum honours pins and registered streaming queries: a VACUUM by Spark, Databricks or delta-rs does not.",
	"pin.state.active":            "active",
	"pin.state.expired":           "expired (no longer honoured)",
	"pin.state.invalid":           "cannot be trusted: every VACUUM refuses until it is removed",
	"table.runs.none":             "No runs yet.",
	"table.runs.all":              "Every run of this table",
	"table.history":               "History (DESCRIBE HISTORY)",
	"table.history.broken":        "The history cannot be read while the table is broken (see above).",
	"table.history.note":          "The newest {n} commits; older ones: GET /api/tables/{id}/history?offset={n}.",

	"policy.retention":        "Retention",
	"policy.retention.table":  "the table's own (delta.deletedFileRetentionDuration)",
	"policy.retention.preset": "{preset} ({hours})",
	// The retention presets of maintenance.yaml (config.Presets), named as a reader says them.
	"policy.preset.dimensional":      "dimension table",
	"policy.preset.merge-heavy-fact": "high-churn (MERGE-heavy) fact table",
	"policy.preset.streaming-sink":   "streaming sink",
	"policy.preset.regulated":        "regulated data",
	"policy.check.off":               "retention check disabled",
	"policy.mode":                    "Mode",
	"mode.full":                      "FULL",
	"mode.lite":                      "LITE",
	"mode.auto":                      "auto: LITE, and FULL at times",
	"policy.fullevery":               "FULL every {every}",
	"policy.trash":                   "Trash",
	"policy.trash.on":                "files are moved to the trash (_deltavacuum/trash/), where an undo finds them",
	"policy.trash.off":               "files are deleted",
	"policy.inspections":             "Inspections",
	"policy.inspect.off":             "after each run and undo, and when asked",
	"policy.inspect.every":           "after each run and undo, and every {every}",
	"policy.dryrunonly":              "Dry run only",
	"policy.dryrunonly.yes":          "yes: never run",
	"policy.dryrunonly.no":           "no",
	"policy.schedule":                "Schedule",
	"policy.window":                  "window {window}",
	"policy.jitter":                  "jitter {jitter}",
	"policy.next":                    "next {at}",
	"policy.noschedule":              "none (runs through the API or this page only)",

	// The table types of insight's retention presets (the Fabric guidance).
	"preset.streaming sink":                "streaming sink",
	"preset.high-churn (MERGE-heavy) fact": "high-churn (MERGE-heavy) fact",
	"preset.dimensional":                   "dimensional",
	"preset.regulated":                     "regulated",
	"preset.table retention":               "table retention",

	// What the deletion vectors of the live files hold (insight.DeletionVectors).
	"dv.title":         "Deletion vectors: what VACUUM cannot reclaim",
	"dv.files":         "{files} ({bytes}) of the table carry a deletion vector, kept in {vectors} ({vectorbytes}). The rows a vector marks deleted stay in their file, which is still in the table: VACUUM keeps them, whatever the retention.",
	"dv.rows":          "{deleted} of their {rows} rows are marked deleted ({share} %), about {bytes} of the files.",
	"dv.optimize":      "More than {threshold} % of the rows deleted (OPTIMIZE rewrites these)",
	"dv.mostly":        "More than half of the rows deleted",
	"dv.unknown":       "Share unknown (their statistics give no number of rows)",
	"dv.count":         "{files} · {bytes}, of which about {deleted} deleted",
	"dv.purge":         "REORG TABLE … APPLY (PURGE), then a VACUUM once {retention} have passed, would delete {files} ({bytes}) and write about {written}: {saved} less in storage, {cost} per month.",
	"dv.guidance":      "Microsoft Fabric's guidance: OPTIMIZE purges the files whose deletion vector marks more than {threshold} % of their rows deleted; REORG … APPLY (PURGE) purges the others ({link}).",
	"dv.guidance.link": "Reorganize Delta tables with REORG",

	"whatif.title":   "What if the retention were…",
	"whatif.version": "version {version}",
	"whatif.below":   "refused: below the table's retention",
	"whatif.ok":      "passes",

	// The preview page.
	"preview.title":                "Preview of {id}",
	"preview.moved":                "The table changed since the preview run {id} was asked to execute: that run deleted nothing. This is the new preview; check it, then run it.",
	"preview.what":                 "A VACUUM {mode} at a retention of {retention} (cutoff {cutoff}) of version {version}, planned {at},",
	"preview.deletes":              "deletes {files} ({bytes}) and {dirs}.",
	"preview.moves":                "moves {files} ({bytes}) to the trash {trash}, and deletes {dirs}.",
	"preview.digest":               "Plan {digest}. Run now executes exactly this plan: it plans again, and deletes only if the new plan is this one.",
	"preview.dryrunonly":           "This table is dry run only: it is never run.",
	"preview.oneoff":               "A one-off retention of {retention}, not the policy's: Run now runs this plan at it, once.",
	"preview.run":                  "Run now",
	"preview.again":                "Preview again",
	"preview.back":                 "Back to the table",
	"preview.byfolder":             "By folder",
	"preview.root":                 "(table root)",
	"preview.morefolders.one":      "1 more folder is not shown (GET /api/tables/{table}/previews/{digest} has the first 100).",
	"preview.morefolders.other":    "{n} more folders are not shown (GET /api/tables/{table}/previews/{digest} has the first 100).",
	"preview.kept":                 "Kept, and why",
	"preview.keptnone":             "nothing listed is kept",
	"preview.lite":                 "A LITE plan lists nothing: the files it keeps are not counted.",
	"preview.files.deleted":        "Files to delete",
	"preview.files.moved":          "Files to move to the trash",
	"preview.page":                 "Files {from}–{to} of {total} (page {page} of {pages}).",
	"preview.with":                 "with its checksum companion {file}",
	"preview.nothing":              "Nothing to delete.",
	"preview.retention.trap":       "{what} is 2555 hours, about 106 days, not 7 years: seven years are 2555 days ({hours} hours).",
	"preview.retention.what.run":   "RETAIN {hours} HOURS",
	"preview.retention.what.table": "The table's delta.deletedFileRetentionDuration",
	"preview.notes.more.one":       "The plan has 1 more note: GET /api/tables/{table}/previews/{digest} has it.",
	"preview.notes.more.other":     "The plan has {n} more notes: GET /api/tables/{table}/previews/{digest} has them.",
	"pager.prev":                   "← previous",
	"pager.next":                   "next →",

	// Why a listed file is kept (vacuum.Rule), in plain words.
	"rule.hidden":                       "hidden (a name starting with _ or .)",
	"rule.nested_table":                 "in another table nested inside",
	"rule.directory":                    "a folder",
	"rule.live":                         "in the table now",
	"rule.live_deletion_vector":         "a deletion vector of a file in the table",
	"rule.tombstone_in_retention":       "removed, but within the retention",
	"rule.deletion_vector_in_retention": "a deletion vector of a file removed within the retention",
	"rule.not_older_than_cutoff":        "newer than the cutoff",
	"rule.protected_in_other_spelling":  "a file of the table under another spelling",
	"rule.protected_path_below":         "on the path of a file of the table",
	"rule.read_by_reader":               "kept for a reader of the table (a pin, a streaming query, Iceberg, a clone)",
	"rule.unreferenced":                 "deleted",

	// Why a file is deleted (vacuum.Reason), in plain words.
	"reason.tombstone":       "removed from the table longer ago than the retention",
	"reason.untracked":       "never part of the table: no commit names it",
	"reason.change_data":     "change data (_change_data/) no commit keeps",
	"reason.deletion_vector": "a deletion vector no commit names",
	"reason.age":             "last modified {modified}, before the cutoff {cutoff}",

	// A run's state (package run's, and the service's planned).
	"state.planned":          "planned",
	"state.running":          "running",
	"state.completed":        "completed",
	"state.failed":           "failed",
	"state.partially undone": "partially undone",
	"state.undone":           "undone",
	"state.unreadable":       "unreadable",
	"trigger.api":            "started through the API",
	"trigger.schedule":       "scheduled",

	// The run page.
	"runs.title":            "Runs of every table",
	"runs.title.table":      "Runs of table {id}",
	"runs.page":             "Runs {from}–{to} of {total}, newest first (page {page} of {pages}).",
	"runs.all":              "all tables",
	"runs.none":             "No runs yet.",
	"run.title":             "Run {id}",
	"run.table":             "Table {id}",
	"run.started":           "started {at}",
	"run.ended":             "ended {at}",
	"run.state":             "State:",
	"run.cancel":            "Cancel",
	"run.moved.banner":      "The table changed since the preview: this run deleted nothing. Making a new preview…",
	"run.planchanged":       "The table changed since the preview: this run deleted nothing. Preview the table again, then run the new plan.",
	"run.planchanged.short": "the table changed since the preview: nothing deleted",
	"run.moved.short":       "moved to the trash",
	"run.oneoff":            "Run at a one-off retention of {retention}, not the policy's.",
	"run.oneoff.preview":    "Run at a one-off retention of {retention} (its preview's), not the policy's.",
	"run.oneoff.fabric":     "Run at a one-off retention of {retention}, the retentionPeriod of its Fabric job, not the policy's.",
	"run.untracked.one":     "Its plan held {files} ({bytes}) that no commit names, what failed or unfinished writers leave; most in {folders}.",
	"run.untracked.other":   "Its plan held {files} ({bytes}) that no commit names, what failed or unfinished writers leave; most in {folders}.",
	"folder.root":           "the table's root",
	"detail.planned":        "Accepted: it is planning, and the table holds no record of it yet.",
	"detail.running":        "In progress.",
	"detail.completed":      "Completed.",
	"detail.failed":         "Failed: it did not do everything it planned (the error says why).",
	"detail.interrupted":    "Interrupted: its record says it was running, and no process runs it any more.",
	"detail.undone":         "Undone {at}: all {files} back.",
	"detail.partial":        "The undo of {at} brought {back} of {all} back.",
	"detail.unreadable":     "Its run record cannot be read: {error}",
	"counts.deleted":        "{files} deleted ({bytes}).",
	"counts.moved":          "{files} moved to the trash ({bytes}).",
	"counts.planned":        "{files} planned ({bytes}); the run ended before it recorded what it deleted.",

	// The undo, on the run page.
	"undo.title":                  "Undo",
	"undo.dry":                    "Undo… (see what would come back first)",
	"undo.again.dry":              "Undo again… (see what would come back first)",
	"undo.cancel":                 "Do not restore",
	"undo.restore":                "Restore {files}",
	"undo.companion":              "checksum companion",
	"undo.last.title":             "The last undo",
	"undo.more.one":               "1 more file is not shown.",
	"undo.more.other":             "{n} more files are not shown.",
	"undo.summary.dry":            "Dry run: would restore {files} ({bytes}) from the {via}.",
	"undo.summary.done":           "At {at}: restored {files} ({bytes}) from the {via}.",
	"undo.summary.rest":           " Besides: {rest}.",
	"undo.summary.present":        "{files} already there",
	"undo.summary.not restorable": "{files} cannot come back (not restorable)",
	"undo.summary.failed":         "{files} failed",
	"outcome.restored":            "restored",
	"outcome.would restore":       "would restore",
	"outcome.present":             "already there",
	"outcome.not restorable":      "cannot come back (not restorable)",
	"outcome.failed":              "failed: undoing again retries it",
	"via.trash":                   "trash",
	"via.store recovery":          "store's recovery",
	"via.":                        "",
	"undoability.yes":             "What it deletes can come back: the {via} keeps it.",
	"undoability.no":              "What it deletes cannot come back.",
	"undoability.unknown":         "Whether what it deletes can come back is not known.",

	// What the table's store keeps of a deleted file (storage.Recovery: its kind, where the
	// table is), in the words of the pages; the store's own words are the API's.
	"recovery.none":        "the store keeps nothing of a deleted file: a delete frees the storage at once",
	"recovery.none.local":  "local disk: a delete frees the space at once and keeps nothing",
	"recovery.none.memory": "in memory: a delete keeps nothing",
	"recovery.versioning":  "the store keeps a deleted file as a previous version, until a lifecycle rule or a user removes it",
	"recovery.soft-delete": "the store keeps a deleted file {days} days (soft delete)",
	"recovery.unknown":     "whether the store keeps deleted files could not be read",

	// Why an undo is offered, or not (UndoOffer.Reason).
	"undo.running":         "The run is in progress: cancel it, then undo.",
	"undo.unreadable":      "Its run record cannot be read, so nothing tells what to bring back: {error}.",
	"undo.no-record":       "The table keeps no run record of it: it deleted nothing, so there is nothing to undo.",
	"undo.undone":          "Undone: every file it deleted is back.",
	"undo.nothing-kept":    "It cannot be undone: nothing kept the files it deleted ({detail}). A policy with trash: true moves them to the trash instead, where an undo finds them.",
	"undo.rest-lost":       "The files still missing cannot come back: nothing keeps them any more (the trash was purged, or the store no longer keeps them). Undoing again would not help.",
	"undo.purged":          "It cannot be undone any more: its trash was purged on {at}.",
	"undo.nothing-deleted": "It deleted nothing: there is nothing to undo.",
	"undo.retry":           "Some files failed to come back: undoing again retries them.",
	"undo.unknown":         "Whether the store keeps deleted files could not be read ({detail}): an undo may bring nothing back. See what would come back first.",
	"undo.possible":        "Bring back what this run deleted. See what would come back first.",
	"undo.interrupted":     "The run was interrupted before it ended: an undo brings back what of its planned files is missing, where the trash or the store keeps them.",

	// The undo column of the runs tables (UndoOffer.Reason).
	"undocol.running":         "not yet",
	"undocol.unreadable":      "unknown",
	"undocol.no-record":       "nothing to undo",
	"undocol.undone":          "undone",
	"undocol.nothing-kept":    "cannot be undone",
	"undocol.rest-lost":       "the rest cannot come back",
	"undocol.purged":          "trash purged",
	"undocol.nothing-deleted": "nothing to undo",
	"undocol.retry":           "undo again",
	"undocol.unknown":         "may be undone",
	"undocol.possible":        "can be undone ({via})",
	"undocol.interrupted":     "can be undone ({via})",

	// The error page: its title is the status.
	"http.400":   "Bad request",
	"http.403":   "Not allowed",
	"http.404":   "Not found",
	"http.409":   "Conflict",
	"http.422":   "Cannot be done",
	"http.500":   "Internal error",
	"http.502":   "The table failed",
	"http.503":   "Unavailable",
	"http.error": "Error {code}",

	// The error page.
	"error.back":    "Back to table {table}",
	"error.preview": "Preview {table} again",
	"error.all":     "All tables",
	"error.detail":  "In detail (in English):",

	// The login page.
	"login.title":   "Log in",
	"login.notoken": "This service has no token configured: there is nothing to log in to.",
	"login.open":    "Open the tables.",
	"login.intro":   "Give the token of this service (the variable the token: key of maintenance.yaml names). It is kept in an HttpOnly, SameSite=Strict cookie of this browser and sent with each request.",
	"login.token":   "Token",
	"login.submit":  "Log in",

	// The page's script.
	"js.progress.deleted.one":            "{done} of 1 file deleted ({bytes})",
	"js.progress.deleted.other":          "{done} of {n} files deleted ({bytes})",
	"js.progress.moved.one":              "{done} of 1 file moved to the trash ({bytes})",
	"js.progress.moved.other":            "{done} of {n} files moved to the trash ({bytes})",
	"js.progress.failed":                 ", {n} failed",
	"js.progress.listed.one":             " · 1 entry listed",
	"js.progress.listed.other":           " · {n} entries listed",
	"js.phase.starting":                  "starting",
	"js.phase.reading the log":           "reading the log",
	"js.phase.listing":                   "listing the table",
	"js.phase.looking for nested tables": "looking for nested tables",
	"js.phase.re-checking the log":       "re-checking the log",
	"js.phase.recording the run":         "recording the run",
	"js.phase.deleting":                  "deleting",
	"js.phase.done":                      "done",
	"js.error.status":                    "the service answered {status}",
}
