package service

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// page gets path with the request headers hdr (name, value, …), as a browser would: the
// page's language, the cookie it sets (nil: none), and the page.
func page(t *testing.T, f *fixture, path string, hdr ...string) (string, *http.Cookie, string) {
	t.Helper()
	req, err := http.NewRequest("GET", f.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	var set *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == langCookie {
			set = c
		}
	}
	body := string(b)
	lang := ""
	if i := strings.Index(body, `<html lang="`); i >= 0 {
		lang, _, _ = strings.Cut(body[i+12:], `"`)
	}
	if got := resp.Header.Get("Content-Language"); got != lang {
		t.Errorf("GET %s: Content-Language %q, <html lang> %q", path, got, lang)
	}
	return lang, set, body
}

// TestLanguageOfThePage: the page follows the browser's Accept-Language (pt, pt-BR and pt-PT
// to Brazilian Portuguese, English otherwise and by default); the switch (?lang=) wins and
// sets a cookie that later pages follow over Accept-Language; the switch keeps the page's
// other parameters. Hostile input is passed over, never reflected nor kept: a ?lang= that is
// not a language of the pages, given twice, with a header or markup in it, very long; a
// cookie that names none; an Accept-Language that cannot be read or is very long.
func TestLanguageOfThePage(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	for _, c := range []struct {
		accept, want string
	}{
		{"", "en"},
		{"pt-BR", "pt-BR"},
		{"pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7", "pt-BR"},
		{"pt", "pt-BR"},
		{"pt-PT", "pt-BR"},
		{"en-US,en;q=0.9", "en"},
		{"en;q=0.1, pt;q=0.9", "pt-BR"},
		{"fr, pt;q=0.5", "pt-BR"},
		{"es, de", "en"},
		{"*", "en"},
		{"\xff\xfe;;;q=x", "en"},
		{"pt-BR;q=abc", "en"},
		{strings.Repeat("pt-BR,", 400), "en"}, // longer than any browser's: passed over
		{"<script>alert(1)</script>", "en"},
	} {
		lang, set, body := page(t, f, "/", "Accept-Language", c.accept)
		if lang != c.want || set != nil {
			t.Errorf("Accept-Language %.40q: page in %q (cookie %v), want %q and no cookie", c.accept, lang, set, c.want)
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("Accept-Language %q is in the page", c.accept)
		}
	}

	// The switch: ?lang= wins over Accept-Language and sets the cookie.
	lang, set, body := page(t, f, "/runs?table=a&lang=pt-BR", "Accept-Language", "en")
	if lang != "pt-BR" || set == nil || set.Value != "pt-BR" || !set.HttpOnly || set.Path != "/" || set.SameSite != http.SameSiteLaxMode || set.MaxAge <= 0 {
		t.Fatalf("?lang=pt-BR: page in %q, cookie %+v", lang, set)
	}
	for _, want := range []string{`href="/runs?lang=en&amp;table=a" hreflang="en"`, `href="/runs?lang=pt-BR&amp;table=a" hreflang="pt-BR" lang="pt-BR" data-lang="pt-BR" aria-current="true">Português (Brasil)</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the switch lacks %s", want)
		}
	}
	cookie := langCookie + "=" + set.Value
	if lang, set, _ := page(t, f, "/tables/a", "Accept-Language", "en-US", "Cookie", cookie); lang != "pt-BR" || set != nil {
		t.Errorf("with the cookie: page in %q, cookie set again %v", lang, set)
	}
	if lang, set, _ := page(t, f, "/tables/a?lang=en", "Accept-Language", "pt-BR", "Cookie", cookie); lang != "en" || set == nil || set.Value != "en" {
		t.Errorf("?lang=en with the pt-BR cookie: page in %q, cookie %v", lang, set)
	}
	if lang, _, _ := page(t, f, "/tables/a?lang=PT-br"); lang != "pt-BR" {
		t.Errorf("?lang=PT-br: page in %q", lang)
	}

	// Hostile switches and cookies are passed over: the page is in Accept-Language's language.
	for _, q := range []string{
		"lang=xx", "lang=", "lang=pt-BR&lang=en", "lang=en&lang=en",
		"lang=" + url.QueryEscape("pt-BR<script>alert(1)</script>"),
		"lang=" + url.QueryEscape("pt-BR\r\nSet-Cookie: evil=1"),
		"lang=" + url.QueryEscape("pt-BR; Path=/; Domain=evil.example"),
		"lang=" + strings.Repeat("a", 5000),
		"lang=" + url.QueryEscape("../../etc/passwd"),
		"lang=pt_BR", "lang=pt-BR-x-evil",
	} {
		lang, set, body := page(t, f, "/?"+q, "Accept-Language", "pt")
		if lang != "pt-BR" || set != nil {
			t.Errorf("?%.60s: page in %q, cookie %v; want pt-BR (Accept-Language) and no cookie", q, lang, set)
		}
		for _, bad := range []string{"<script>alert", "evil", "Set-Cookie", "etc/passwd", strings.Repeat("a", 100)} {
			if strings.Contains(body, bad) {
				t.Errorf("?%.60s: the page says %.40q", q, bad)
			}
		}
	}
	for _, v := range []string{"xx", `"pt-BR"`, "pt-BR%3Bx", strings.Repeat("p", 4000), "pt-BR\u00e9"} {
		if lang, set, _ := page(t, f, "/", "Accept-Language", "pt", "Cookie", langCookie+"="+v); lang != "pt-BR" || set != nil {
			t.Errorf("cookie %.40q: page in %q, cookie %v; want Accept-Language's pt-BR", v, lang, set)
		}
	}

	// The JSON API stays English, whatever the browser asks.
	req, _ := http.NewRequest("GET", f.http.URL+"/api/tables/nope/inspect", nil)
	req.Header.Set("Accept-Language", "pt-BR")
	req.AddCookie(&http.Cookie{Name: langCookie, Value: "pt-BR"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), "no table") || resp.Header.Get("Content-Language") != "" {
		t.Errorf("the API in pt-BR: %d %s", resp.StatusCode, b)
	}
}
