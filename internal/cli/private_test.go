package cli

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// fakeSource serves private arguments from memory: descriptor 3 holds fd3, the variable
// DV_ARGS holds env (and is unset when read).
func fakeSource(fd3 string, env map[string]string) privateSource {
	return privateSource{
		openFD: func(fd int) (io.ReadCloser, error) {
			if fd != 3 {
				return nil, errors.New("bad file descriptor")
			}
			return io.NopCloser(strings.NewReader(fd3)), nil
		},
		getenv:   func(k string) string { return env[k] },
		unsetenv: func(k string) error { delete(env, k); return nil },
	}
}

func TestExpandPrivateArgs(t *testing.T) {
	const secretArgs = `["--storage-option=aws_endpoint=http://user:PW@127.0.0.1:9000", "--inventory=https://a.blob.core.windows.net/c/inv?sv=1&sig=SIG", "--", "abfss://c@a.dfs.core.windows.net/t?sig=SIG"]`
	for _, tc := range []struct {
		name string
		args []string
		fd3  string
		want []string
	}{
		{"no channel", []string{"vacuum", "--dry-run", "--", "t"}, "", []string{"vacuum", "--dry-run", "--", "t"}},
		{"flags after the command, the table after the public --", []string{"--args-fd", "3", "vacuum", "--json", "--dry-run", "--"}, secretArgs,
			[]string{"vacuum", "--storage-option=aws_endpoint=http://user:PW@127.0.0.1:9000", "--inventory=https://a.blob.core.windows.net/c/inv?sv=1&sig=SIG", "--json", "--dry-run", "--", "abfss://c@a.dfs.core.windows.net/t?sig=SIG"}},
		{"a -- added when the command line has none", []string{"--args-fd=3", "inspect", "--json"}, `["--conf=k=v", "--", "/t"]`,
			[]string{"inspect", "--conf=k=v", "--json", "--", "/t"}},
		{"flags only", []string{"--args-fd=3", "sql", "--json"}, `["--warehouse=/w?sig=x", "--catalog=/c.yaml"]`,
			[]string{"sql", "--warehouse=/w?sig=x", "--catalog=/c.yaml", "--json"}},
		{"nothing private", []string{"--args-fd=3", "runs", "--", "/t"}, `[]`, []string{"runs", "--", "/t"}},
		{"the positional arguments after the public ones", []string{"--args-fd=3", "vacuum", "--", "/a"}, `["--", "/b"]`, []string{"vacuum", "--", "/a", "/b"}},
		{"a private value that looks like a flag stays a value", []string{"--args-fd=3", "vacuum", "--dry-run"}, `["--storage-option=k=--dry-run=false", "--", "--dry-run=false"]`,
			[]string{"vacuum", "--storage-option=k=--dry-run=false", "--dry-run", "--", "--dry-run=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expandPrivateArgs(tc.args, fakeSource(tc.fd3, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}

	t.Run("from an environment variable, unset once read", func(t *testing.T) {
		env := map[string]string{"DV_ARGS": `["--storage-option=azure_storage_sas_token=SIG"]`}
		got, err := expandPrivateArgs([]string{"--args-env=DV_ARGS", "vacuum", "--", "/t"}, fakeSource("", env))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"vacuum", "--storage-option=azure_storage_sas_token=SIG", "--", "/t"}; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if _, ok := env["DV_ARGS"]; ok {
			t.Error("the variable is still set")
		}
	})
}

// TestPrivateArgsRefused: hostile or broken private arguments are usage errors that never
// quote what was read (it may be a secret), and never change the command or what it does.
func TestPrivateArgsRefused(t *testing.T) {
	huge := `["--storage-option=k=` + strings.Repeat("x", maxPrivateArgs) + `"]`
	for _, tc := range []struct {
		name string
		args []string
		fd3  string
		want string
	}{
		{"descriptor not open", []string{"--args-fd=9", "vacuum"}, "", "--args-fd 9: bad file descriptor"},
		{"a standard stream", []string{"--args-fd=0", "vacuum"}, "", "3 or more"},
		{"not a number", []string{"--args-fd=x3", "vacuum"}, "", "want the number of an inherited file descriptor"},
		{"no value", []string{"--args-fd"}, "", "needs a value"},
		{"no command", []string{"--args-fd=3"}, `["--", "undo"]`, "must be followed by the command"},
		{"a flag instead of the command", []string{"--args-fd=3", "--dry-run", "vacuum"}, `[]`, "must be followed by the command"},
		{"not the first argument", []string{"vacuum", "--args-fd=3", "--", "t"}, `[]`, "must be the first argument"},
		{"two channels", []string{"--args-fd=3", "vacuum", "--args-env=X"}, `[]`, "only one"},
		{"empty", []string{"--args-fd=3", "vacuum"}, ``, "not a JSON array of strings"},
		{"not JSON", []string{"--args-fd=3", "vacuum"}, `--storage-option=SECRET`, "not a JSON array of strings"},
		{"an object", []string{"--args-fd=3", "vacuum"}, `{"storage-option": "SECRET"}`, "want an array"},
		{"a number among the strings", []string{"--args-fd=3", "vacuum"}, `["--conf=a=b", 3]`, "not a JSON array of strings"},
		{"invalid UTF-8", []string{"--args-fd=3", "vacuum"}, "[\"--storage-option=k=\xff\"]", "invalid UTF-8"},
		{"trailing data", []string{"--args-fd=3", "vacuum"}, `["--conf=a=b"] ["undo"]`, "data after the JSON value"},
		{"a NUL byte", []string{"--args-fd=3", "vacuum"}, `["--storage-option=k=v\u0000x"]`, "NUL byte"},
		{"another command", []string{"--args-fd=3", "vacuum", "--dry-run"}, `["undo"]`, "private argument 0 is not --NAME=VALUE"},
		{"a flag that changes what the command does", []string{"--args-fd=3", "vacuum", "--dry-run"}, `["--dry-run=false"]`, "private argument 0 is not --NAME=VALUE"},
		{"a private flag without =", []string{"--args-fd=3", "vacuum"}, `["--storage-option", "k=v"]`, "private argument 0 is not --NAME=VALUE"},
		{"a shorthand", []string{"--args-fd=3", "vacuum"}, `["-v"]`, "private argument 0 is not"},
		{"a channel inside the channel", []string{"--args-fd=3", "vacuum"}, `["--args-fd=3"]`, "private argument 0 is not"},
		{"too long", []string{"--args-fd=3", "vacuum"}, huge, "exceed 1048576 bytes"},
		{"the variable unset", []string{"--args-env=NOPE", "vacuum"}, "", "not set or empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expandPrivateArgs(tc.args, fakeSource(tc.fd3, map[string]string{}))
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q, %v; want a usage error saying %q", got, err, tc.want)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "xxxxxxxx") {
				t.Errorf("the error quotes what was read: %v", err)
			}
		})
	}
}
