package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const valid = `listen: 127.0.0.1:9090
dataDir: state
maxConcurrentRuns: 2
storageOptions:
  aws_region: ${AWS_REGION}
tables:
  - id: sales
    path: /data/sales
    policy:
      retention: merge-heavy-fact
      mode: auto
      fullEvery: 72h
      trash: true
      inspectEvery: 6h
    schedule:
      cron: "0 2 * * *"
      timezone: Europe/Amsterdam
      window: {start: "01:00", end: "05:00"}
      jitter: 20m
  - name: dbo.orders
    warehouse: abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse
    dryRunOnly: true
    policy:
      retention: 24.5
      retentionCheck: disabled
    storageOptions:
      azure_client_secret: ${ORDERS_SECRET}
`

func TestParseValid(t *testing.T) {
	cfg, err := Parse([]byte(valid), "m.yaml", "/etc/dv")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9090" || cfg.DataDir != "/etc/dv/state" || cfg.MaxConcurrentRuns != 2 || !cfg.Loopback() {
		t.Errorf("got listen %s dataDir %s max %d", cfg.Listen, cfg.DataDir, cfg.MaxConcurrentRuns)
	}
	if diff := cmp.Diff(map[string]EnvRef{"aws_region": "AWS_REGION"}, cfg.StorageOptions); diff != "" {
		t.Error(diff)
	}
	if len(cfg.Tables) != 2 {
		t.Fatalf("got %d tables, want 2", len(cfg.Tables))
	}
	s := cfg.Tables[0]
	wantPol := Policy{Retention: Retention{Preset: "merge-heavy-fact", Hours: 72, Set: true}, RetentionCheck: true, Mode: ModeAuto, FullEvery: 72 * time.Hour, Trash: true, InspectEvery: 6 * time.Hour}
	if s.ID != "sales" || s.Path != "/data/sales" || s.Policy != wantPol || s.Line != 7 {
		t.Errorf("got %+v", s)
	}
	if s.Schedule == nil || s.Schedule.Cron.String() != "0 2 * * *" || s.Schedule.TimeZone != "Europe/Amsterdam" ||
		s.Schedule.Window == nil || s.Schedule.Window.Start.String() != "01:00" || s.Schedule.Window.End.String() != "05:00" || s.Schedule.Jitter != 20*time.Minute {
		t.Errorf("got schedule %+v", s.Schedule)
	}
	o := cfg.Tables[1]
	if o.ID != "dbo.orders" || o.Name != "dbo.orders" || !o.DryRunOnly || o.Schedule != nil ||
		o.Policy != (Policy{Retention: Retention{Hours: 24.5, Set: true}, RetentionCheck: false, Mode: ModeFull, InspectEvery: DefaultInspectEvery}) {
		t.Errorf("got %+v", o)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse([]byte("dataDir: /s\ntables:\n  - {id: a, path: /a}\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != DefaultListen || cfg.MaxConcurrentRuns != 1 || cfg.Token != "" {
		t.Errorf("got %+v", cfg)
	}
	// Nothing said: the table's own retention, the safety check on, FULL, no trash.
	if got, want := cfg.Tables[0].Policy, (Policy{RetentionCheck: true, Mode: ModeFull, InspectEvery: DefaultInspectEvery}); got != want {
		t.Errorf("got policy %+v, want %+v", got, want)
	}
	cfg, err = Parse([]byte("dataDir: /s\ntables:\n  - {id: a, path: /a, policy: {mode: AUTO}}\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Tables[0].Policy; p.Mode != ModeAuto || p.FullEvery != DefaultFullEvery {
		t.Errorf("auto without fullEvery: got %+v", p)
	}
	for y, want := range map[string]time.Duration{"off": 0, "5m": MinInspectEvery, "6h": 6 * time.Hour, "24h": DefaultInspectEvery} {
		cfg, err = Parse([]byte("dataDir: /s\ntables:\n  - {id: a, path: /a, policy: {inspectEvery: "+y+"}}\n"), "m.yaml", "")
		if err != nil {
			t.Fatalf("inspectEvery: %s: %v", y, err)
		}
		if got := cfg.Tables[0].Policy.InspectEvery; got != want {
			t.Errorf("inspectEvery: %s: got %s, want %s", y, got, want)
		}
	}
}

// TestRefused is the hostile file: every key with values it must refuse, each error with the
// line of the offending value.
func TestRefused(t *testing.T) {
	const head = "dataDir: /s\n"
	one := func(table string) string { return head + "tables:\n  - " + table + "\n" }
	cases := []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"empty file", "", 0, "empty"},
		{"not yaml", "dataDir: [", 0, "not valid YAML"},
		{"two documents", head + "tables: [{id: a, path: /a}]\n---\ndataDir: /t\n", 0, "second YAML document"},
		{"top level a list", "- a\n", 1, "must be a mapping"},
		{"unknown top key", head + "tables: [{id: a, path: /a}]\nlisten_addr: x\n", 3, `unknown key "listen_addr"`},
		{"key in other case", head + "tables: [{id: a, path: /a}]\nDataDir: /t\n", 3, `unknown key "DataDir"`},
		{"duplicate key", head + "dataDir: /t\ntables: [{id: a, path: /a}]\n", 2, `key "dataDir" given twice`},
		{"alias", head + "x: &a 1\n", 2, "aliases"},
		{"anchor on a table", head + "tables:\n  - &t {id: a, path: /a}\n", 3, "aliases"},
		{"merge key", head + "tables:\n  - {<<: {id: a}, path: /a}\n", 3, "a key must be a plain name"},
		{"no dataDir", "tables: [{id: a, path: /a}]\n", 1, "dataDir is missing"},
		{"dataDir a number", "dataDir: 5\ntables: [{id: a, path: /a}]\n", 1, "dataDir must be a string"},
		{"dataDir empty", "dataDir: ''\ntables: [{id: a, path: /a}]\n", 1, "dataDir is empty"},
		{"no tables", head, 1, "tables is missing"},
		{"one path under two ids", head + "tables:\n  - {id: a, path: /lake/t}\n  - {id: b, path: /lake/t/}\n", 4, "is the table of line 3"},
		{"one URI under two ids", head + "tables:\n  - {id: a, path: s3://b/t}\n  - {id: b, path: s3a://b/t}\n", 4, "is the table of line 3"},
		{"tables empty", head + "tables: []\n", 2, "at least one table"},
		{"tables a map", head + "tables: {a: b}\n", 2, "at least one table"},
		{"listen no port", head + "listen: 127.0.0.1\n" + "tables: [{id: a, path: /a}]\n", 2, "host:port"},
		{"listen bad port", head + "listen: 127.0.0.1:99999\n" + "tables: [{id: a, path: /a}]\n", 2, "port must be a number"},
		{"listen host name", head + "listen: example.com:80\ntoken: ${T}\n" + "tables: [{id: a, path: /a}]\n", 2, "IP address or localhost"},
		{"listen public without token", head + "listen: 0.0.0.0:8080\n" + "tables: [{id: a, path: /a}]\n", 2, "token is required"},
		{"listen all interfaces without token", head + "listen: ':8080'\n" + "tables: [{id: a, path: /a}]\n", 2, "token is required"},
		{"token literal", head + "token: s3cr3t-value-of-mine\n" + "tables: [{id: a, path: /a}]\n", 2, "environment variable reference"},
		{"token env with suffix", head + "token: ${T}x\n" + "tables: [{id: a, path: /a}]\n", 2, "environment variable reference"},
		{"token $NAME without braces", head + "token: $T\n" + "tables: [{id: a, path: /a}]\n", 2, "environment variable reference"},
		{"token bad env name", head + "token: ${1T}\n" + "tables: [{id: a, path: /a}]\n", 2, "environment variable reference"},
		{"token a number", head + "token: 12345678901234567\n" + "tables: [{id: a, path: /a}]\n", 2, "environment variable reference"},
		{"maxConcurrentRuns zero", head + "maxConcurrentRuns: 0\n" + "tables: [{id: a, path: /a}]\n", 2, "between 1 and 64"},
		{"maxConcurrentRuns string", head + "maxConcurrentRuns: '2'\n" + "tables: [{id: a, path: /a}]\n", 2, "whole number"},
		{"maxConcurrentRuns float", head + "maxConcurrentRuns: 2.5\n" + "tables: [{id: a, path: /a}]\n", 2, "whole number"},
		{"storage option literal", head + "storageOptions:\n  aws_secret_access_key: AKIAsecret\n" + "tables: [{id: a, path: /a}]\n", 3, "environment variable reference"},
		{"storage option literal non-secret", head + "storageOptions:\n  aws_region: eu-west-1\n" + "tables: [{id: a, path: /a}]\n", 3, "environment variable reference"},
		{"storage option unknown", head + "storageOptions:\n  aws_regoin: ${R}\n" + "tables: [{id: a, path: /a}]\n", 3, `unknown storage option "aws_regoin"`},
		{"storage option alias twice", head + "storageOptions:\n  aws_access_key_id: ${A}\n  access_key_id: ${B}\n" + "tables: [{id: a, path: /a}]\n", 4, "given twice"},
		{"storage options a list", head + "storageOptions: [a]\n" + "tables: [{id: a, path: /a}]\n", 2, "must be a mapping"},
		{"table a string", one("/data/a"), 3, "table must be a mapping"},
		{"table unknown key", one("{id: a, path: /a, retention: 24}"), 3, `unknown key "retention"`},
		{"table neither", one("{id: a}"), 3, "neither path nor name"},
		{"table both", one("{id: a, path: /a, name: s.t, warehouse: /w}"), 3, "both path and name"},
		{"path with warehouse", one("{id: a, path: /a, warehouse: /w}"), 3, "takes neither"},
		{"name without warehouse", one("{name: s.t}"), 3, "needs warehouse or catalog"},
		{"name with four parts", one("{name: a.b.c.d, warehouse: /w}"), 3, "must be table, schema.table"},
		{"name with empty part", one("{name: a..b, warehouse: /w}"), 3, "must be table, schema.table"},
		{"name with slash", one("{name: a/b, warehouse: /w}"), 3, "must be table, schema.table"},
		{"path without id", one("{path: /a}"), 3, "needs an id"},
		{"id with slash", one("{id: a/b, path: /a}"), 3, "must be letters"},
		{"id with space", one("{id: 'a b', path: /a}"), 3, "must be letters"},
		{"id leading blank", one("{id: ' a', path: /a}"), 3, "leading or trailing blanks"},
		{"id duplicate", head + "tables:\n  - {id: a, path: /a}\n  - {id: A, path: /b}\n", 4, "already used by the table on line 3"},
		{"id duplicate of a name", head + "tables:\n  - {id: s.t, path: /a}\n  - {name: s.t, warehouse: /w}\n", 4, "already used"},
		{"path empty", one("{id: a, path: ''}"), 3, "path is empty"},
		{"path a list", one("{id: a, path: [/a]}"), 3, "path must be a string"},
		{"path unsupported scheme", one("{id: a, path: 'ftp://h/a'}"), 3, "unsupported scheme"},
		{"path with password", one("{id: a, path: 's3://user:pw@b/t'}"), 3, "password or a query"},
		{"path with SAS", one("{id: a, path: 'abfss://c@acct.dfs.core.windows.net/t?sv=1&sig=abc'}"), 3, "password or a query"},
		{"warehouse with SAS", one("{name: t, warehouse: 'abfss://c@acct.dfs.core.windows.net/w?sig=abc'}"), 3, "password or a query"},
		{"catalog a number", one("{name: t, catalog: 5}"), 3, "catalog must be a string"},
		{"dryRunOnly yes", one("{id: a, path: /a, dryRunOnly: yes}"), 3, "true or false"},
		{"dryRunOnly string", one("{id: a, path: /a, dryRunOnly: 'true'}"), 3, "true or false"},
		{"policy a string", one("{id: a, path: /a, policy: weekly}"), 3, "policy must be a mapping"},
		{"policy unknown key", one("{id: a, path: /a, policy: {retainHours: 24}}"), 3, `unknown key "retainHours"`},
		{"retention unknown preset", one("{id: a, path: /a, policy: {retention: fact}}"), 3, `"fact" is not a preset`},
		{"retention preset in other case", one("{id: a, path: /a, policy: {retention: Regulated}}"), 3, "is not a preset"},
		{"retention negative", one("{id: a, path: /a, policy: {retention: -1}}"), 3, "from 0 to"},
		{"retention huge", one("{id: a, path: /a, policy: {retention: 1e12}}"), 3, "from 0 to"},
		{"retention NaN", one("{id: a, path: /a, policy: {retention: .nan}}"), 3, "from 0 to"},
		{"retention infinite", one("{id: a, path: /a, policy: {retention: .inf}}"), 3, "from 0 to"},
		{"retention with unit", one("{id: a, path: /a, policy: {retention: 24h}}"), 3, "not a preset"},
		{"retention a list", one("{id: a, path: /a, policy: {retention: [24]}}"), 3, "preset name or a number"},
		{"retention bool", one("{id: a, path: /a, policy: {retention: true}}"), 3, "preset name or a number"},
		{"retentionCheck false", one("{id: a, path: /a, policy: {retentionCheck: false}}"), 3, "enabled or disabled"},
		{"retentionCheck off", one("{id: a, path: /a, policy: {retentionCheck: off}}"), 3, "enabled or disabled"},
		{"mode unknown", one("{id: a, path: /a, policy: {mode: fast}}"), 3, "full, lite or auto"},
		{"fullEvery without auto", one("{id: a, path: /a, policy: {mode: lite, fullEvery: 72h}}"), 3, "mode auto only"},
		{"fullEvery no unit", one("{id: a, path: /a, policy: {mode: auto, fullEvery: 72}}"), 3, "must be a string"},
		{"fullEvery days", one("{id: a, path: /a, policy: {mode: auto, fullEvery: 3d}}"), 3, "not a duration"},
		{"fullEvery short", one("{id: a, path: /a, policy: {mode: auto, fullEvery: 1m}}"), 3, "between 1h0m0s"},
		{"trash string", one("{id: a, path: /a, policy: {trash: 'yes'}}"), 3, "true or false"},
		{"schedule a string", one("{id: a, path: /a, schedule: '0 2 * * *'}"), 3, "schedule must be a mapping"},
		{"schedule unknown key", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, tz: UTC}}"), 3, `unknown key "tz"`},
		{"schedule no timezone", one("{id: a, path: /a, schedule: {cron: '0 2 * * *'}}"), 3, "timezone is missing"},
		{"schedule no cron", one("{id: a, path: /a, schedule: {timezone: UTC}}"), 3, "cron is missing"},
		{"timezone unknown", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: Mars/Olympus}}"), 3, "not a known zone"},
		{"timezone Local", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: Local}}"), 3, "IANA zone name"},
		{"timezone path", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: /etc/localtime}}"), 3, "IANA zone name"},
		{"cron six fields", one("{id: a, path: /a, schedule: {cron: '0 0 2 * * *', timezone: UTC}}"), 3, "has 6 fields, want 5"},
		{"cron four fields", one("{id: a, path: /a, schedule: {cron: '0 2 * *', timezone: UTC}}"), 3, "has 4 fields"},
		{"cron descriptor", one("{id: a, path: /a, schedule: {cron: '@daily', timezone: UTC}}"), 3, "descriptors"},
		{"cron every", one("{id: a, path: /a, schedule: {cron: '@every 1h', timezone: UTC}}"), 3, "descriptors"},
		{"cron TZ prefix", one("{id: a, path: /a, schedule: {cron: 'CRON_TZ=UTC 0 2 * * *', timezone: UTC}}"), 3, "timezone key"},
		{"cron minute 60", one("{id: a, path: /a, schedule: {cron: '60 2 * * *', timezone: UTC}}"), 3, "cron"},
		{"cron hour 24", one("{id: a, path: /a, schedule: {cron: '0 24 * * *', timezone: UTC}}"), 3, "cron"},
		{"cron a number", one("{id: a, path: /a, schedule: {cron: 5, timezone: UTC}}"), 3, "cron must be a string"},
		{"window no end", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '01:00'}}}"), 3, "end is missing"},
		{"window unknown key", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '01:00', end: '02:00', days: 1}}}"), 3, `unknown key "days"`},
		{"window bad clock", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '1:00', end: '02:00'}}}"), 3, "HH:MM"},
		{"window 24:00", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '22:00', end: '24:00'}}}"), 3, "midnight is 00:00"},
		{"window start a number", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: 100, end: '02:00'}}}"), 3, "window start must be a string"},
		{"window empty", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '02:00', end: '02:00'}}}"), 3, "both 02:00"},
		{"jitter negative", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, jitter: -5m}}"), 3, "between 0s"},
		{"jitter no unit", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, jitter: 30}}"), 3, "must be a string"},
		{"jitter longer than window", one("{id: a, path: /a, schedule: {cron: '0 2 * * *', timezone: UTC, window: {start: '01:00', end: '02:00'}, jitter: 1h}}"), 3, "not shorter than the window"},
		{"inspectEvery negative", one("{id: a, path: /a, policy: {inspectEvery: -24h}}"), 3, "between 5m0s"},
		{"inspectEvery zero", one("{id: a, path: /a, policy: {inspectEvery: 0s}}"), 3, "between 5m0s"},
		{"inspectEvery too often", one("{id: a, path: /a, policy: {inspectEvery: 1s}}"), 3, "between 5m0s"},
		{"inspectEvery too rare", one("{id: a, path: /a, policy: {inspectEvery: 9000h}}"), 3, "between 5m0s"},
		{"inspectEvery no unit", one("{id: a, path: /a, policy: {inspectEvery: 24}}"), 3, "inspectEvery must be a string"},
		{"inspectEvery a word", one("{id: a, path: /a, policy: {inspectEvery: daily}}"), 3, "is not a duration"},
		{"inspectEvery OFF in capitals", one("{id: a, path: /a, policy: {inspectEvery: OFF}}"), 3, "is not a duration"},
		{"inspectEvery false", one("{id: a, path: /a, policy: {inspectEvery: false}}"), 3, "inspectEvery must be a string"},
		{"table storage option literal", one("{id: a, path: /a, storageOptions: {azure_storage_account_key: abc==}}"), 3, "environment variable reference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if p, ok := problem(t, tc.yaml, tc.want); ok && tc.line != 0 && p.Line != tc.line {
				t.Errorf("%q on line %d, want line %d", p.Msg, p.Line, tc.line)
			}
		})
	}
}

// TestSecretsNeverEchoed: a literal secret refused is not repeated in the error.
func TestSecretsNeverEchoed(t *testing.T) {
	for _, y := range []string{
		"dataDir: /s\ntoken: hunter2-hunter2-hunter2\ntables: [{id: a, path: /a}]\n",
		"dataDir: /s\nstorageOptions: {aws_secret_access_key: hunter2-hunter2-hunter2}\ntables: [{id: a, path: /a}]\n",
		"dataDir: /s\ntables: [{id: a, path: 's3://u:hunter2-hunter2-hunter2@b/t'}]\n",
		"dataDir: /s\ntables: [{id: a, path: 'abfss://c@a.dfs.core.windows.net/t?sig=hunter2-hunter2-hunter2'}]\n",
	} {
		_, err := Parse([]byte(y), "m.yaml", "")
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("got %v, want an error without the secret", err)
		}
	}
}

func TestManyProblemsAtOnce(t *testing.T) {
	_, err := Parse([]byte("dataDir: /s\nbogus: 1\ntables:\n  - {path: /a}\n  - {id: b, path: /b, policy: {mode: x}}\n"), "m.yaml", "")
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 3 {
		t.Fatalf("got %v, want 3 problems", err)
	}
	if !strings.HasPrefix(err.Error(), "configuration m.yaml is not valid:\n  line 2: ") {
		t.Errorf("got %q", err.Error())
	}
}

func TestPresets(t *testing.T) {
	want := map[string]float64{"dimensional": 720, "merge-heavy-fact": 72, "streaming-sink": 48, "regulated": 61320}
	if len(Presets) != len(want) {
		t.Fatalf("got %d presets, want %d", len(Presets), len(want))
	}
	for name, h := range want {
		cfg, err := Parse([]byte("dataDir: /s\ntables: [{id: a, path: /a, policy: {retention: "+name+"}}]\n"), "m.yaml", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Tables[0].Policy.Retention; got != (Retention{Preset: name, Hours: h, Set: true}) {
			t.Errorf("%s: got %+v, want %v hours", name, got, h)
		}
	}
}

func TestToken(t *testing.T) {
	cfg, err := Parse([]byte("listen: 0.0.0.0:8080\ndataDir: /s\ntoken: ${DV_TOKEN}\ntables: [{id: a, path: /a}]\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Loopback() {
		t.Error("0.0.0.0 taken for loopback")
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if _, err := cfg.ResolveToken(getenv); err == nil || !strings.Contains(err.Error(), "DV_TOKEN") {
		t.Errorf("unset: got %v", err)
	}
	env["DV_TOKEN"] = "short"
	if _, err := cfg.ResolveToken(getenv); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("short: got %v, want a refusal without the value", err)
	}
	env["DV_TOKEN"] = "0123456789abcdef"
	if got, err := cfg.ResolveToken(getenv); err != nil || got != "0123456789abcdef" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, l := range []string{"127.0.0.1:1", "[::1]:1", "localhost:1", "127.8.9.10:1"} {
		if !isLoopback(l) {
			t.Errorf("%s not taken for loopback", l)
		}
	}
	for _, l := range []string{":1", "0.0.0.0:1", "[::]:1", "10.0.0.1:1", "localhost.example.com:1"} {
		if isLoopback(l) {
			t.Errorf("%s taken for loopback", l)
		}
	}
}

func TestResolveStorageOptions(t *testing.T) {
	cfg, err := Parse([]byte(`dataDir: /s
storageOptions: {aws_region: "${REGION}", aws_allow_http: "${HTTP}"}
tables:
  - {id: a, path: 's3://b/a', storageOptions: {region: "${REGION_A}"}}
`), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REGION": "eu-west-1", "REGION_A": "us-east-1", "HTTP": "true"}
	o, err := cfg.ResolveStorageOptions(&cfg.Tables[0], func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if o["aws_region"] != "us-east-1" || o["aws_allow_http"] != "true" {
		t.Errorf("got %v: the table's option overrides the configuration's", o)
	}
	env["HTTP"] = "maybe"
	if _, err := cfg.ResolveStorageOptions(&cfg.Tables[0], func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "true or false") {
		t.Errorf("got %v, want the value checked as a flag is", err)
	}
	env["HTTP"] = "true"
	delete(env, "REGION_A")
	if _, err := cfg.ResolveStorageOptions(&cfg.Tables[0], func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "REGION_A") {
		t.Errorf("got %v, want the unset variable named", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "maintenance.yaml")
	if err := os.WriteFile(p, []byte("dataDir: state\ntables: [{name: t, catalog: cat.yaml}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != filepath.Join(dir, "state") || cfg.Tables[0].Catalog != filepath.Join(dir, "cat.yaml") {
		t.Errorf("got dataDir %s catalog %s: relative to the file's directory", cfg.DataDir, cfg.Tables[0].Catalog)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
}

// problem returns the problem of the configuration yaml whose message holds want, failing the
// test when the file is valid or no problem says it.
func problem(t *testing.T, yaml, want string) (Problem, bool) {
	t.Helper()
	_, err := Parse([]byte(yaml), "m.yaml", "/etc")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a configuration error", err)
	}
	for _, p := range e.Problems {
		if strings.Contains(p.Msg, want) {
			return p, true
		}
	}
	t.Errorf("got %v, want a problem with %q", err, want)
	return Problem{}, false
}

// TestStreamingCheckpoints: a table's streamingCheckpoints are locations, checked as its path
// is; anything else is refused with the line, and discovered tables carry their root.
func TestStreamingCheckpoints(t *testing.T) {
	cfg, err := Parse([]byte("dataDir: /s\ntables:\n  - {id: a, path: /a, streamingCheckpoints: [/cp/orders, 's3://bucket/cp/x']}\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tables[0].StreamingCheckpoints; len(got) != 2 || got[0] != "/cp/orders" || got[1] != "s3://bucket/cp/x" {
		t.Errorf("streamingCheckpoints: %q", got)
	}
	for _, bad := range []string{
		"streamingCheckpoints: /cp",
		"streamingCheckpoints: [[/cp]]",
		"streamingCheckpoints: ['']",
		"streamingCheckpoints: [' /cp']",
		"streamingCheckpoints: [/cp, /cp]",
		"streamingCheckpoints: ['https://acct.blob.core.windows.net/c/cp?sig=SECRET']",
		"streamingCheckpoints: ['ftp://host/cp']",
		"streamingCheckpoints: [1]",
	} {
		_, err := Parse([]byte("dataDir: /s\ntables:\n  - {id: a, path: /a, "+bad+"}\n"), "m.yaml", "")
		if err == nil || !strings.Contains(err.Error(), "line 3") && !strings.Contains(err.Error(), ":3") {
			t.Errorf("%s: %v, want a refusal naming the line", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the refusal echoes the secret: %v", bad, err)
		}
	}
	d := Discover{ID: "lh", Root: "/w"}
	if got := d.Table("lh.t", "/w/t").Root; got != "/w" {
		t.Errorf("a discovered table's root: %q", got)
	}
}
