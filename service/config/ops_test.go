package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const opsValid = `dataDir: /s
staleRunAfter: 20m
discover:
  - id: lake
    root: s3://bucket/warehouse
    refresh: 1h
    policy: {retention: 72, trash: true, undoWindow: 168h}
    schedule: {cron: "*/5 * * * *", timezone: UTC}
stores:
  - {prefix: "s3://bucket/", requestsPerSecond: 50}
  - {prefix: "abfss://c@acct.dfs.core.windows.net/", requestsPerSecond: 2.5, burst: 10}
webhook:
  url: ${HOOK_URL}
  on: [failed]
`

func TestParseOps(t *testing.T) {
	cfg, err := Parse([]byte(opsValid), "m.yaml", "/etc")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tables) != 0 || len(cfg.Discover) != 1 {
		t.Fatalf("got %d tables, %d discover", len(cfg.Tables), len(cfg.Discover))
	}
	d := cfg.Discover[0]
	if d.ID != "lake" || d.Root != "s3://bucket/warehouse" || d.Refresh != time.Hour || d.Schedule == nil ||
		!d.Policy.Trash || d.Policy.UndoWindow != 168*time.Hour || d.Policy.Retention.Hours != 72 {
		t.Errorf("got %+v", d)
	}
	if cfg.StaleRunAfter != 20*time.Minute {
		t.Errorf("staleRunAfter %s", cfg.StaleRunAfter)
	}
	if len(cfg.Stores) != 2 || cfg.Stores[0].RequestsPerSecond != 50 || cfg.Stores[0].Burst != 50 || cfg.Stores[1].Burst != 10 || cfg.Stores[1].RequestsPerSecond != 2.5 {
		t.Errorf("stores %+v", cfg.Stores)
	}
	if cfg.Webhook == nil || cfg.Webhook.URLEnv != "HOOK_URL" || cfg.Webhook.URL != "" || !slices.Equal(cfg.Webhook.On, []string{"failed"}) {
		t.Errorf("webhook %+v", cfg.Webhook)
	}
	both, err := Parse([]byte(strings.Replace(opsValid, "on: [failed]", "on: [untracked.grew, failed]", 1)), "m.yaml", "/etc")
	if err != nil || !slices.Equal(both.Webhook.On, []string{"untracked.grew", "failed"}) {
		t.Errorf("webhook on both: %+v, %v", both.Webhook, err)
	}
	def, err := Parse([]byte(strings.Replace(opsValid, "  on: [failed]\n", "", 1)), "m.yaml", "/etc")
	if err != nil || !slices.Equal(def.Webhook.On, []string{"failed", "untracked.grew"}) {
		t.Errorf("webhook by default: %+v, %v", def.Webhook, err)
	}
	u, err := cfg.Webhook.ResolveURL(func(string) string { return "https://hooks.example/T/secret" })
	if err != nil || u != "https://hooks.example/T/secret" {
		t.Errorf("resolve: %q %v", u, err)
	}
	if _, err := cfg.Webhook.ResolveURL(func(string) string { return "ftp://hooks.example/x" }); err == nil {
		t.Error("an ftp URL from the environment was accepted")
	}
	// Defaults.
	cfg, err = Parse([]byte("dataDir: /s\ntables: [{id: a, path: /a}]\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StaleRunAfter != DefaultStaleRunAfter || cfg.Webhook != nil || cfg.Stores != nil {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestRefusedOps(t *testing.T) {
	const head = "dataDir: /s\ntables: [{id: a, path: /a}]\n"
	disc := func(s string) string { return head + "discover:\n  - " + s + "\n" }
	cases := []struct{ name, yaml, want string }{
		{"discover unknown key", disc("{id: l, root: /w, refresh: 1h, rot: /x}"), `unknown key "rot"`},
		{"discover no root", disc("{id: l, refresh: 1h}"), "root is missing"},
		{"discover no id", disc("{root: /w, refresh: 1h}"), "id is missing"},
		{"discover bad id", disc("{id: 'l/x', root: /w, refresh: 1h}"), "discover id"},
		{"discover id of a table", disc("{id: A, root: /w, refresh: 1h}"), "already used"},
		{"discover bad root scheme", disc("{id: l, root: 'ftp://h/w', refresh: 1h}"), "root"},
		{"discover root with password", disc("{id: l, root: 's3://u:pw@bucket/w', refresh: 1h}"), "password or a query"},
		{"discover root with SAS", disc("{id: l, root: 'https://acct.blob.core.windows.net/c/w?sig=abc', refresh: 1h}"), "password or a query"},
		{"discover refresh zero", disc("{id: l, root: /w, refresh: 0s}"), "refresh 0s must be between"},
		{"discover refresh negative", disc("{id: l, root: /w, refresh: -1h}"), "refresh -1h must be between"},
		{"discover refresh no unit", disc("{id: l, root: /w, refresh: 60}"), "refresh must be a string"},
		{"discover no refresh", disc("{id: l, root: /w}"), "refresh is missing"},
		{"discover empty", head + "discover: []\n", "discover must be a list"},
		{"discover twice", head + "discover:\n  - {id: l, root: /w, refresh: 1h}\n  - {id: L, root: /v, refresh: 1h}\n", "already used"},
		{"discover storage option literal", disc("{id: l, root: /w, refresh: 1h, storageOptions: {aws_secret_access_key: x}}"), "environment variable reference"},
		{"store local", head + "stores: [{prefix: /data/, requestsPerSecond: 5}]\n", "local disk"},
		{"store zero rate", head + "stores: [{prefix: 's3://b/', requestsPerSecond: 0}]\n", "from 0.1"},
		{"store negative rate", head + "stores: [{prefix: 's3://b/', requestsPerSecond: -5}]\n", "from 0.1"},
		{"store rate string", head + "stores: [{prefix: 's3://b/', requestsPerSecond: '5'}]\n", "must be a number"},
		{"store rate nan", head + "stores: [{prefix: 's3://b/', requestsPerSecond: .nan}]\n", "from 0.1"},
		{"store no rate", head + "stores: [{prefix: 's3://b/'}]\n", "requestsPerSecond is missing"},
		{"store burst zero", head + "stores: [{prefix: 's3://b/', requestsPerSecond: 5, burst: 0}]\n", "burst must be between"},
		{"store unknown key", head + "stores: [{prefix: 's3://b/', rps: 5}]\n", `unknown key "rps"`},
		{"store twice", head + "stores: [{prefix: 's3://b/', requestsPerSecond: 5}, {prefix: 's3://b/', requestsPerSecond: 6}]\n", "already given"},
		{"store with key", head + "stores: [{prefix: 's3://k:secret@b/', requestsPerSecond: 5}]\n", "password or a query"},
		{"webhook ftp", head + "webhook: {url: 'ftp://h/x'}\n", "scheme"},
		{"webhook plain http", head + "webhook: {url: 'http://hooks.example/x'}\n", "loopback"},
		{"webhook password", head + "webhook: {url: 'https://u:pw@hooks.example/x'}\n", "user or password"},
		{"webhook relative", head + "webhook: {url: '/x'}\n", "absolute"},
		{"webhook no url", head + "webhook: {on: [failed]}\n", "url is missing"},
		{"webhook env with suffix", head + "webhook: {url: '${H}/x'}\n", "environment variable reference"},
		{"webhook on completed", head + "webhook: {url: 'https://h/x', on: [completed]}\n", "not an event"},
		{"webhook on empty", head + "webhook: {url: 'https://h/x', on: []}\n", "list of events"},
		{"webhook unknown key", head + "webhook: {url: 'https://h/x', secret: y}\n", `unknown key "secret"`},
		{"undoWindow without trash", head[:len("dataDir: /s\n")] + "tables: [{id: a, path: /a, policy: {undoWindow: 168h}}]\n", "trash: true only"},
		{"undoWindow 7d", head[:len("dataDir: /s\n")] + "tables: [{id: a, path: /a, policy: {trash: true, undoWindow: 7d}}]\n", "not a duration"},
		{"undoWindow zero", head[:len("dataDir: /s\n")] + "tables: [{id: a, path: /a, policy: {trash: true, undoWindow: 0s}}]\n", "must be between"},
		{"staleRunAfter short", head + "staleRunAfter: 5s\n", "must be between"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if p, ok := problem(t, tc.yaml, tc.want); ok && strings.Contains(tc.yaml, "k:secret") && strings.Contains(p.Msg, "secret") {
				t.Errorf("the secret is echoed: %s", p.Msg)
			}
		})
	}
}
