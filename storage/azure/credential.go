package azure

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// CredentialError is a Microsoft Entra credential's failure to give a token, told in one
// paragraph: which credential (or, for the SDK's default chain, which of its credentials)
// was tried for which table, and which storage options or environment variables give one.
// The SDK's own message spans many lines (each credential of the chain, whole HTTP
// responses); it stays reachable with errors.As and errors.Unwrap, never printed.
type CredentialError struct {
	// Credential is what was tried: "the SDK's default chain", "the Azure CLI", ...
	Credential string
	// Tried are the credentials of the default chain the SDK reported, described; empty for
	// a single credential.
	Tried []string
	// Reason is one line from the SDK's message for a single credential ("" for the chain).
	Reason string
	// Location is the table.
	Location string
	// OneLake is set for a OneLake table, which takes Microsoft Entra tokens only.
	OneLake bool
	Err     error
}

func (e *CredentialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no Microsoft Entra token for %s: ", e.Location)
	if len(e.Tried) > 0 {
		fmt.Fprintf(&b, "tried %s (%s); none gave one. ", e.Credential, strings.Join(e.Tried, "; "))
	} else {
		fmt.Fprintf(&b, "tried %s", e.Credential)
		if e.Reason != "" {
			fmt.Fprintf(&b, ": %s", e.Reason)
		}
		b.WriteString(". ")
	}
	if e.OneLake {
		b.WriteString("OneLake takes Microsoft Entra credentials: give --storage-option azure_storage_token with a token for " +
			"https://storage.azure.com (in a Fabric notebook, notebookutils.credentials.getToken('storage')), or azure_client_id, " +
			"azure_client_secret and azure_tenant_id (a service principal), or azure_use_azure_cli=true after az login; " +
			"or set AZURE_STORAGE_TOKEN, or AZURE_CLIENT_ID, AZURE_CLIENT_SECRET and AZURE_TENANT_ID.")
		return b.String()
	}
	b.WriteString("Give a credential with --storage-option azure_storage_account_key (Shared Key), azure_storage_sas_token (a SAS), " +
		"azure_storage_token (a bearer token), azure_client_id with azure_client_secret and azure_tenant_id (a service principal), " +
		"or azure_use_azure_cli=true after az login; or set AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN, " +
		"AZURE_STORAGE_TOKEN, or AZURE_CLIENT_ID, AZURE_CLIENT_SECRET and AZURE_TENANT_ID.")
	return b.String()
}

func (e *CredentialError) Unwrap() error { return e.Err }

// explained is a credential whose failures are CredentialErrors.
type explained struct {
	cred     azcore.TokenCredential
	name     string
	location string
	oneLake  bool
}

// explain wraps cred so that its failures read as one paragraph naming loc.
func explain(cred azcore.TokenCredential, loc string, oneLake bool) azcore.TokenCredential {
	if _, ok := cred.(*explained); ok {
		return cred
	}
	return &explained{cred: cred, name: credentialName(cred), location: loc, oneLake: oneLake}
}

func credentialName(cred azcore.TokenCredential) string {
	switch cred.(type) {
	case *azidentity.DefaultAzureCredential:
		return "the SDK's default chain"
	case *azidentity.AzureCLICredential:
		return "the Azure CLI (azure_use_azure_cli)"
	case *azidentity.ClientSecretCredential:
		return "the service principal (azure_client_id, azure_client_secret, azure_tenant_id)"
	case *azidentity.ManagedIdentityCredential:
		return "managed identity"
	case *azidentity.WorkloadIdentityCredential:
		return "workload identity (azure_federated_token_file)"
	}
	return "the given credential"
}

func (c *explained) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := c.cred.GetToken(ctx, opts)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return tok, err
	}
	e := &CredentialError{Credential: c.name, Location: c.location, OneLake: c.oneLake, Err: err}
	if _, ok := c.cred.(*azidentity.DefaultAzureCredential); ok {
		e.Tried = chainTried(err.Error())
	}
	if len(e.Tried) == 0 {
		e.Reason = oneLine(err.Error())
	}
	return tok, e
}

// chainLine matches a credential's line in the default chain's message:
// "\tEnvironmentCredential: missing environment variable AZURE_TENANT_ID",
// "\tManagedIdentityCredential authentication failed. ".
var chainLine = regexp.MustCompile(`(?m)^\s*([A-Za-z]+Credential)(:| authentication failed)`)

var chainDescriptions = map[string]string{
	"EnvironmentCredential":       "environment: AZURE_TENANT_ID, AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH",
	"WorkloadIdentityCredential":  "workload identity: AZURE_FEDERATED_TOKEN_FILE",
	"ManagedIdentityCredential":   "managed identity",
	"AzureCLICredential":          "Azure CLI: az login",
	"AzureDeveloperCLICredential": "Azure Developer CLI: azd auth login",
	"AzurePowerShellCredential":   "Azure PowerShell: Connect-AzAccount",
}

// chainTried describes the credentials the default chain's message reports, in order; a
// credential that answered and was refused (rather than found unavailable) is marked so.
func chainTried(msg string) []string {
	var out []string
	for _, m := range chainLine.FindAllStringSubmatch(msg, -1) {
		name := m[1]
		if name == "DefaultAzureCredential" {
			continue
		}
		d, ok := chainDescriptions[name]
		if !ok {
			d = name
		}
		if m[2] != ":" {
			d += ", which was refused"
			if st := httpStatus.FindStringSubmatch(msg); st != nil {
				d += " with HTTP " + st[1]
			}
		}
		out = append(out, d)
	}
	return out
}

var (
	httpStatus = regexp.MustCompile(`RESPONSE (\d{3})`)
	aadsts     = regexp.MustCompile(`AADSTS\d+`)
)

// oneLine is the gist of a single credential's message: its first line, with the HTTP status
// and the Entra error code when the message has them, at most 200 characters.
func oneLine(msg string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	first = strings.TrimSpace(first)
	if st := httpStatus.FindStringSubmatch(msg); st != nil {
		first += " (HTTP " + st[1]
		if code := aadsts.FindString(msg); code != "" {
			first += " " + code
		}
		first += ")"
	}
	if len(first) > 200 {
		first = first[:200] + "…"
	}
	return first
}
