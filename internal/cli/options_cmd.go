package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// storageOptionsDoc is the --json document of storage-options: the one table of the storage
// options, which the Python package reads instead of keeping a copy.
type storageOptionsDoc struct {
	Options []storageOptionDoc `json:"options"`
	// SDKCredentialEnv are, by store, the variables through which the SDKs' default chains
	// take a credential the user chose.
	SDKCredentialEnv map[string][]string `json:"sdkCredentialEnv"`
}

type storageOptionDoc struct {
	Name       string   `json:"name"`
	Aliases    []string `json:"aliases"`
	Env        []string `json:"env"`
	Secret     bool     `json:"secret"`
	Credential bool     `json:"credential"`
	For        string   `json:"for"`
	Doc        string   `json:"doc,omitempty"`
	Refused    string   `json:"refused,omitempty"`
}

func newStorageOptionsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "storage-options",
		Short: "List the --storage-option keys, their aliases and environment variables",
		Long: `List every key --storage-option KEY=VALUE takes (the keys of delta-rs and object_store), with
its aliases, the environment variables read when it is not given, whether it is a secret (never
printed) or chooses a credential, and what it does; the keys other tools take that deltavacuum
refuses say why and what to use instead.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc := storageOptionsDoc{Options: []storageOptionDoc{}, SDKCredentialEnv: location.SDKCredentialEnv}
			for _, k := range location.Keys {
				doc.Options = append(doc.Options, storageOptionDoc{Name: k.Name, Aliases: nonNil(k.Aliases), Env: nonNil(k.Env),
					Secret: k.Secret, Credential: k.Credential, For: k.For, Doc: k.Doc, Refused: k.Refused})
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), doc)
			}
			w := cmd.OutOrStdout()
			for _, o := range doc.Options {
				names := strings.Join(append([]string{o.Name}, o.Aliases...), ", ")
				what := o.Doc
				if o.Refused != "" {
					what = "refused: " + o.Refused
				}
				env := ""
				if len(o.Env) > 0 {
					env = " [env " + strings.Join(o.Env, ", ") + "]"
				}
				fmt.Fprintf(w, "%s (%s)%s\n    %s\n", names, o.For, env, what)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	return cmd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
