package cli

import (
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// The private arguments: the command line of a process is readable by every user of the
// machine (ps, /proc/PID/cmdline), so a program that runs deltavacuum for someone (the Python
// package) passes what may hold a secret another way: the table location (a URI may carry a
// password or a SAS), every --storage-option, --conf, --inventory, --warehouse, --catalog and --streaming-checkpoint.
// It writes them, as a JSON array of strings, into a pipe whose read end the child inherits,
// and names the descriptor with --args-fd N; where no descriptor can be inherited (Python on
// Windows), into an environment variable named with --args-env NAME (an environment is
// readable by the same user only), which is unset once read.
//
// The channel flag must be the first argument and the command must follow it:
//
//	deltavacuum --args-fd 3 vacuum --json --dry-run      with ["--storage-option=k=v", "--", "s3://b/t"] on descriptor 3
//	-> deltavacuum vacuum --storage-option=k=v --json --dry-run -- s3://b/t
//
// The array holds flags, each --NAME=VALUE with NAME one of privateFlags, then optionally
// "--" and the positional arguments. The flags are inserted right after the command's name,
// the positional arguments appended after the command line's own "--" (one is added when it
// has none). Nothing else can come this way: not a command, not a flag that changes what the
// command does (--dry-run=false), so the private arguments can only say where and with which
// credentials, never what.
const (
	argsFDFlag  = "--args-fd"
	argsEnvFlag = "--args-env"
	// maxPrivateArgs bounds what is read from the channel: a few locations and options.
	maxPrivateArgs = 1 << 20
)

// privateFlags are the flags the private arguments may set.
var privateFlags = []string{"storage-option", "conf", "inventory", "warehouse", "catalog", "streaming-checkpoint"}

// privateSource reads the private arguments: from an inherited descriptor or an environment
// variable. Tests replace it.
type privateSource struct {
	openFD   func(fd int) (io.ReadCloser, error)
	getenv   func(string) string
	unsetenv func(string) error
}

var osPrivateSource = privateSource{
	openFD: func(fd int) (io.ReadCloser, error) {
		f := os.NewFile(uintptr(fd), "args-fd")
		if f == nil {
			return nil, errors.New("not a descriptor")
		}
		return f, nil
	},
	getenv:   os.Getenv,
	unsetenv: os.Unsetenv,
}

// expandPrivateArgs returns args with the private arguments merged in as described above, or
// args unchanged when the first argument names no channel. Its errors never quote what was
// read: it may be a secret.
func expandPrivateArgs(args []string, src privateSource) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	flag, value, hasValue := strings.Cut(args[0], "=")
	if flag != argsFDFlag && flag != argsEnvFlag {
		for i, a := range args {
			if a == "--" {
				break
			}
			if f, _, _ := strings.Cut(a, "="); f == argsFDFlag || f == argsEnvFlag {
				return nil, usagef("%s must be the first argument (argument %d is)", f, i+1)
			}
		}
		return args, nil
	}
	rest := args[1:]
	if !hasValue {
		if len(rest) == 0 {
			return nil, usagef("%s needs a value", flag)
		}
		value, rest = rest[0], rest[1:]
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return nil, usagef("%s must be followed by the command (vacuum, inspect, sql, ...)", flag)
	}
	for _, a := range rest {
		if a == "--" {
			break
		}
		if f, _, _ := strings.Cut(a, "="); f == argsFDFlag || f == argsEnvFlag {
			return nil, usagef("only one %s or %s, as the first argument", argsFDFlag, argsEnvFlag)
		}
	}
	data, err := readPrivate(flag, value, src)
	if err != nil {
		return nil, err
	}
	flags, positional, err := parsePrivate(flag, data)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rest)+len(flags)+len(positional)+1)
	out = append(out, rest[0])
	out = append(out, flags...)
	out = append(out, rest[1:]...)
	if len(positional) > 0 {
		if !slices.Contains(rest, "--") {
			out = append(out, "--")
		}
		out = append(out, positional...)
	}
	return out, nil
}

// readPrivate reads the content of the channel flag names with value.
func readPrivate(flag, value string, src privateSource) ([]byte, error) {
	if flag == argsEnvFlag {
		if value == "" {
			return nil, usagef("%s needs the name of an environment variable", flag)
		}
		data := src.getenv(value)
		if data == "" {
			return nil, usagef("%s %s: the variable is not set or empty", flag, value)
		}
		// Read once: no process the command starts inherits it.
		_ = src.unsetenv(value)
		if len(data) > maxPrivateArgs {
			return nil, usagef("%s %s: the private arguments exceed %d bytes", flag, value, maxPrivateArgs)
		}
		return []byte(data), nil
	}
	fd, err := strconv.Atoi(value)
	if err != nil || fd < 3 {
		return nil, usagef("%s %q: want the number of an inherited file descriptor, 3 or more (0, 1 and 2 are the standard streams)", flag, value)
	}
	r, err := src.openFD(fd)
	if err != nil {
		return nil, usagef("%s %d: %v", flag, fd, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxPrivateArgs+1))
	if err != nil {
		return nil, usagef("%s %d: reading the private arguments: %v (is the descriptor open, and the read end of a pipe?)", flag, fd, err)
	}
	if len(data) > maxPrivateArgs {
		return nil, usagef("%s %d: the private arguments exceed %d bytes", flag, fd, maxPrivateArgs)
	}
	return data, nil
}

// parsePrivate checks the private arguments, a JSON array of strings, and splits them into
// flags and positional arguments.
func parsePrivate(flag string, data []byte) (flags, positional []string, err error) {
	var list []string
	if err := strictjson.UnmarshalKnown(data, &list); err != nil {
		return nil, nil, usagef("%s: the private arguments are not a JSON array of strings: %v", flag, err)
	}
	dashes := false
	for i, a := range list {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, nil, usagef("%s: private argument %d holds a NUL byte", flag, i)
		}
		if dashes {
			positional = append(positional, a)
			continue
		}
		if a == "--" {
			dashes = true
			continue
		}
		name, _, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !ok || !slices.Contains(privateFlags, name) {
			return nil, nil, usagef("%s: private argument %d is not --NAME=VALUE with NAME one of %s, nor \"--\" before the positional arguments",
				flag, i, strings.Join(privateFlags, ", "))
		}
		flags = append(flags, a)
	}
	return flags, positional, nil
}
