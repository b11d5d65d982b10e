package service

import (
	"github.com/deltavacuum/deltavacuum/run"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/deltavacuum/deltavacuum/insight"
)

// The language of a page: the switch on the page (?lang=en, ?lang=pt-BR), which the cookie
// langCookie then keeps; without either, the browser's Accept-Language; English when none
// names a language of the pages. Only a tag of locales is ever taken from the request, set in
// the cookie or written in the page: anything else the request says is passed over.

// langCookie keeps the language chosen with the switch.
const langCookie = "deltavacuum_lang"

// maxAcceptLanguage bounds the Accept-Language header read: a longer one is passed over (no
// browser sends one near it).
const maxAcceptLanguage = 1024

// langMatcher matches the languages a browser asks for to those of the pages (pt and pt-PT to
// pt-BR, en-US to en).
var langMatcher = language.NewMatcher([]language.Tag{language.English, language.BrazilianPortuguese})

// localeByTag is the locale of tag (any case), nil for none.
func localeByTag(tag string) *locale {
	for _, l := range locales {
		if strings.EqualFold(tag, l.tag) {
			return l
		}
	}
	return nil
}

// langParam is the locale ?lang= asks for: given once, naming a locale.
func langParam(r *http.Request) *locale {
	v, ok := r.URL.Query()["lang"]
	if !ok || len(v) != 1 {
		return nil
	}
	return localeByTag(v[0])
}

// localeOf is the language of the page r asks for.
func localeOf(r *http.Request) *locale {
	if l := langParam(r); l != nil {
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil {
		if l := localeByTag(c.Value); l != nil {
			return l
		}
	}
	return acceptLocale(r.Header.Values("Accept-Language"))
}

// acceptLocale is the locale that best answers the Accept-Language headers h (English when
// none names one of the pages' languages, or they cannot be read).
func acceptLocale(h []string) *locale {
	header := strings.Join(h, ",")
	if header == "" || len(header) > maxAcceptLanguage {
		return english
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return english
	}
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return english
	}
	return locales[i]
}

// setLangCookie keeps the language ?lang= chose, for the pages that follow.
func setLangCookie(w http.ResponseWriter, r *http.Request) {
	l := langParam(r)
	if l == nil {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l.tag, Path: "/", MaxAge: int((365 * 24 * time.Hour).Seconds()),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}

// langLink is a language of the switch: its name in itself, and this page in it.
type langLink struct {
	Tag, Name, Href string
	Current         bool
}

// langLinks is the switch of the page r asks for, shown in l.
func langLinks(r *http.Request, l *locale) []langLink {
	out := make([]langLink, 0, len(locales))
	for _, o := range locales {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			if k != "lang" {
				q[k] = v
			}
		}
		q.Set("lang", o.tag)
		out = append(out, langLink{Tag: o.tag, Name: o.messages["lang.name"], Href: r.URL.Path + "?" + q.Encode(), Current: o == l})
	}
	return out
}

// statusTitle is the title of an error page of status code.
func (l *locale) statusTitle(code int) string {
	id := "http." + strconv.Itoa(code)
	if _, ok := l.messages[id]; ok {
		return l.text(id)
	}
	return l.text("http.error", "code", strconv.Itoa(code))
}

// funcs are the functions of the page templates, bound to l.
func (l *locale) funcs() template.FuncMap {
	return template.FuncMap{
		"bytes":      l.bytes,
		"num":        l.count,
		"percent":    func(f float64) string { return l.shareText(100 * f) },
		"threshold":  func() string { return l.number(100*insight.OptimizeDeletedRowsRatio, -1, false) },
		"folders":    l.foldersText,
		"when":       l.whenHTML,
		"money":      l.money,
		"price":      l.unitPrice,
		"hours":      l.hoursText,
		"dur":        l.durationText,
		"t":          l.markup,
		"tt":         l.text,
		"tn":         l.pluralAny,
		"files":      l.filesHTML,
		"state":      l.stateHTML,
		"rule":       func(r string) string { return l.text("rule." + r) },
		"reason":     l.reasonHTML,
		"preset":     l.presetText,
		"link":       linkHTML,
		"isVacuum":   func(op string) bool { return strings.HasPrefix(op, "VACUUM") },
		"compact":    compactJSON,
		"add":        func(a, b int) int { return a + b },
		"sub":        func(a, b int) int { return a - b },
		"pathEsc":    url.PathEscape,
		"isRunID":    run.ValidID,
		"scriptText": l.scriptMessagesJSON,
		"hold":       l.holdHTML,
		"nowrap":     nowrapHTML,
		"raw":        rawHTML,
		"oneOff":     oneOffID,
		"deref":      func(p *int64) int64 { return *p },
		"derefF":     func(p *float64) float64 { return *p },
	}
}

// foldersShown is how many of a run's untracked folders the run page names.
const foldersShown = 3

// foldersText names the folders holding the most of u's files, with their counts: "p=1 (3),
// the table's root (1)".
func (l *locale) foldersText(u *run.Untracked) string {
	var out []string
	for i, f := range u.Folders {
		if i == foldersShown {
			break
		}
		name := f.Folder
		if name == "" {
			name = l.text("folder.root")
		}
		out = append(out, name+" ("+l.count(f.Files)+")")
	}
	return strings.Join(out, l.text("list.sep"))
}
