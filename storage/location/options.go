package location

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/nearest"
	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
)

// Options are storage settings: from --storage-option KEY=VALUE flags (ParseStorageOptions)
// and the environment. Keys are canonical (lower case, aliases resolved; see Keys).
type Options map[string]string

// Key describes one option.
type Key struct {
	Name    string   // canonical name
	Aliases []string // other accepted names (delta-rs / object_store spellings)
	// Env are the environment variables read, in order, when the option is not given.
	Env    []string
	Secret bool // never printed
	// Credential is set for the keys that choose a credential: given, the store does not fall
	// back to a default chain (nor Python to a notebook's token).
	Credential bool
	For        string
	Doc        string
	// Refused, when set, is why the key is refused and what to use instead: a key other
	// tools take that would change the credential or the endpoint in a way deltavacuum
	// cannot honour, so that accepting it would be a silent lie.
	Refused string
}

// Keys are all the options, in documentation order.
var Keys = []Key{
	// S3
	{Name: "aws_access_key_id", Credential: true, Aliases: []string{"access_key_id"}, For: "s3",
		Doc: "access key id (with aws_secret_access_key); otherwise the AWS SDK's default chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, AWS_PROFILE and the shared config files, web identity, ECS and EC2 roles"},
	{Name: "aws_secret_access_key", Credential: true, Aliases: []string{"secret_access_key"}, Secret: true, For: "s3", Doc: "secret access key"},
	{Name: "aws_session_token", Credential: true, Aliases: []string{"aws_token", "session_token"}, Secret: true, For: "s3", Doc: "session token of temporary credentials"},
	{Name: "aws_region", Aliases: []string{"region", "aws_default_region"}, For: "s3",
		Doc: "region (otherwise AWS_REGION, AWS_DEFAULT_REGION or the shared config; with neither, us-east-1 for a custom endpoint, else asked of S3)"},
	{Name: "aws_endpoint", Aliases: []string{"aws_endpoint_url", "endpoint_url"}, Env: []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"}, For: "s3",
		Doc: "endpoint of an S3-compatible store, e.g. http://127.0.0.1:7070"},
	{Name: "aws_s3_path_style", Aliases: []string{"aws_force_path_style", "path_style"}, Env: []string{"AWS_S3_PATH_STYLE"}, For: "s3",
		Doc: "true: address buckets in the path (endpoint/bucket/key), as most S3-compatible stores need; default true with aws_endpoint, false otherwise"},
	{Name: "aws_virtual_hosted_style_request", Aliases: []string{"virtual_hosted_style_request"}, Env: []string{"AWS_VIRTUAL_HOSTED_STYLE_REQUEST"}, For: "s3",
		Doc: "true: address buckets in the host name (the opposite of aws_s3_path_style)"},
	{Name: "aws_allow_http", Env: []string{"AWS_ALLOW_HTTP"}, For: "s3", Doc: "true: allow an http:// endpoint"},
	{Name: "aws_profile", Credential: true, Aliases: []string{"profile"}, For: "s3", Doc: "shared config profile (otherwise AWS_PROFILE)"},
	{Name: "aws_skip_signature", Credential: true, Env: []string{"AWS_SKIP_SIGNATURE"}, For: "s3", Doc: "true: send unsigned requests (public buckets)"},

	// Azure
	{Name: "azure_storage_account_name", Aliases: []string{"account_name", "azure_account_name"}, Env: []string{"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"}, For: "azure",
		Doc: "storage account, for az:// URIs and account keys (abfss://, wasbs:// and https:// URIs name it)"},
	{Name: "azure_storage_account_key", Credential: true, Aliases: []string{"azure_storage_access_key", "azure_storage_key", "azure_storage_master_key", "account_key", "access_key", "master_key"}, Env: []string{"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_KEY"}, Secret: true, For: "azure",
		Doc: "account key (Shared Key)"},
	{Name: "azure_storage_sas_token", Credential: true, Aliases: []string{"azure_storage_sas_key", "sas_token", "sas_key"}, Env: []string{"AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"}, Secret: true, For: "azure",
		Doc: "shared access signature (the query string; an https:// URI may carry it too)"},
	{Name: "azure_storage_token", Credential: true, Aliases: []string{"bearer_token", "azure_storage_bearer_token"}, Env: []string{"AZURE_STORAGE_TOKEN"}, Secret: true, For: "azure",
		Doc: "a Microsoft Entra access token for https://storage.azure.com, used as is"},
	{Name: "azure_client_id", Credential: true, Aliases: []string{"azure_storage_client_id", "client_id"}, For: "azure",
		Doc: "service principal (with azure_client_secret and azure_tenant_id); otherwise the SDK's default chain: AZURE_CLIENT_ID/AZURE_CLIENT_SECRET/AZURE_TENANT_ID (or a certificate), workload identity (AZURE_FEDERATED_TOKEN_FILE), managed identity, Azure CLI, Azure Developer CLI"},
	{Name: "azure_client_secret", Credential: true, Aliases: []string{"azure_storage_client_secret", "client_secret"}, Secret: true, For: "azure", Doc: "service principal secret"},
	{Name: "azure_tenant_id", Aliases: []string{"azure_storage_tenant_id", "tenant_id", "azure_authority_id", "azure_storage_authority_id", "authority_id"}, For: "azure", Doc: "tenant of the service principal or of the federated token"},
	{Name: "azure_authority_host", Aliases: []string{"azure_storage_authority_host", "authority_host"}, For: "azure",
		Doc: "Microsoft Entra authority of a service principal or a federated token (https://login.microsoftonline.us for Azure Government, ...); the default chain reads AZURE_AUTHORITY_HOST itself"},
	{Name: "azure_federated_token_file", Credential: true, Aliases: []string{"federated_token_file"}, For: "azure",
		Doc: "workload identity: the file of a federated (Kubernetes service account) token, with azure_client_id and azure_tenant_id (or AZURE_CLIENT_ID, AZURE_TENANT_ID)"},
	{Name: "azure_object_id", Credential: true, Aliases: []string{"object_id"}, For: "azure", Doc: "managed identity: the object (principal) id of a user-assigned identity"},
	{Name: "azure_msi_resource_id", Credential: true, Aliases: []string{"msi_resource_id"}, For: "azure", Doc: "managed identity: the resource id of a user-assigned identity"},
	{Name: "azure_msi_endpoint", Aliases: []string{"azure_identity_endpoint", "identity_endpoint", "msi_endpoint"}, For: "azure",
		Refused: "the Azure SDK for Go reaches managed identity only where its host says (the instance metadata service, or IDENTITY_ENDPOINT and IDENTITY_HEADER on App Service, Functions, Container Apps, Arc and Service Fabric, which it reads itself); " +
			"remove the option, and give a token with azure_storage_token if the identity endpoint is elsewhere"},
	{Name: "azure_use_fabric_endpoint", Aliases: []string{"use_fabric_endpoint", "azure_storage_use_fabric_endpoint"}, For: "azure",
		Doc: "true: az://WORKSPACE/ITEM/PATH is in OneLake, at ACCOUNT.blob.fabric.microsoft.com (account onelake unless azure_storage_account_name names a regional one, REGION-onelake); abfss:// and https:// OneLake hosts need no option"},
	{Name: "azure_container_name", Aliases: []string{"container_name"}, For: "azure",
		Doc: "the container (OneLake: workspace); the URI names it, and the option must agree with it"},
	{Name: "azure_disable_tagging", Aliases: []string{"disable_tagging"}, For: "azure",
		Doc: "accepted and ignored: deltavacuum writes no blob index tags (its commits are plain Put Blob requests)"},
	{Name: "azure_fabric_token_service_url", Aliases: []string{"fabric_token_service_url"}, For: "azure", Refused: fabricRefused},
	{Name: "azure_fabric_workload_host", Aliases: []string{"fabric_workload_host"}, For: "azure", Refused: fabricRefused},
	{Name: "azure_fabric_session_token", Aliases: []string{"fabric_session_token"}, Secret: true, For: "azure", Refused: fabricRefused},
	{Name: "azure_fabric_cluster_identifier", Aliases: []string{"fabric_cluster_identifier"}, For: "azure", Refused: fabricRefused},
	{Name: "azure_credential_type", Aliases: []string{"credential_type"}, For: "azure",
		Refused: "deltavacuum picks the credential from the keys given (account key, SAS, bearer token, service principal, federated token, managed identity, Azure CLI, else the default chain): remove it and give only the keys of the credential wanted"},
	{Name: "azure_storage_encryption_key", Aliases: []string{"encryption_key"}, Secret: true, For: "azure",
		Refused: "customer-provided encryption keys are not supported: deltavacuum would fail to read such a table's log and to write its commits"},
	{Name: "azure_use_azure_cli", Credential: true, Aliases: []string{"use_azure_cli"}, Env: []string{"AZURE_USE_AZURE_CLI"}, For: "azure", Doc: "true: authenticate with the Azure CLI's login only"},
	{Name: "azure_endpoint", Aliases: []string{"azure_storage_endpoint", "azure_blob_endpoint"}, Env: []string{"AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"}, For: "azure",
		Doc: "Blob endpoint, with the account for emulators: e.g. http://127.0.0.1:10000/devstoreaccount1"},
	{Name: "azure_dfs_endpoint", For: "azure", Doc: "ADLS Gen2 (DFS) endpoint, derived from the Blob endpoint only for the hosts whose twin Microsoft documents (ACCOUNT.blob.core.windows.net, ACCOUNT.zNN.blob.storage.azure.net, OneLake, ...); used only to delete empty hierarchical-namespace directories the Blob API refuses to"},
	{Name: "azure_storage_use_emulator", Credential: true, Aliases: []string{"use_emulator", "azure_use_emulator", "object_store_use_emulator"}, Env: []string{"AZURE_STORAGE_USE_EMULATOR"}, For: "azure",
		Doc: "true: use Azurite at http://127.0.0.1:10000 (account devstoreaccount1 and its well-known key unless given)"},
	{Name: "azure_allow_http", Env: []string{"AZURE_ALLOW_HTTP"}, For: "azure", Doc: "true: allow an http:// endpoint"},
	{Name: "azure_skip_signature", Credential: true, Env: []string{"AZURE_SKIP_SIGNATURE"}, For: "azure", Doc: "true: send no credentials (public containers)"},

	// GCS
	{Name: "google_service_account", Credential: true, Aliases: []string{"google_service_account_path", "service_account", "service_account_path"}, Env: []string{"GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH"}, For: "gcs",
		Doc: "path of a service-account key file; otherwise application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, the metadata server)"},
	{Name: "google_service_account_key", Credential: true, Aliases: []string{"service_account_key"}, Env: []string{"GOOGLE_SERVICE_ACCOUNT_KEY"}, Secret: true, For: "gcs", Doc: "service-account key, the JSON itself"},
	{Name: "google_endpoint", Aliases: []string{"google_storage_endpoint"}, Env: []string{"GOOGLE_ENDPOINT"}, For: "gcs",
		Doc: "endpoint of an emulator, e.g. http://127.0.0.1:4443 (STORAGE_EMULATOR_HOST=host:port is read too)"},
	{Name: "google_allow_http", Env: []string{"GOOGLE_ALLOW_HTTP"}, For: "gcs", Doc: "true: allow an http:// endpoint (no credentials are sent there)"},
	{Name: "google_skip_signature", Credential: true, Env: []string{"GOOGLE_SKIP_SIGNATURE"}, For: "gcs", Doc: "true: send no credentials (public buckets)"},

	// All object stores
	{Name: "concurrency", Aliases: []string{"max_concurrency"}, For: "all", Doc: "requests in flight: deletes per store, listings per walk (default 16)"},
	{Name: "delete_batch_size", Aliases: []string{"batch_size"}, For: "all", Doc: "keys per batch delete: S3 at most and by default 1000, Azure 256; 1 deletes singly"},
	{Name: "max_retries", For: "all", Doc: "retries of a request on throttling, 5xx and connection errors, with exponential backoff (default 7)"},
	{Name: "list_page_size", For: "all", Doc: "keys per listing page (default: the service's most, 1000 or 5000)"},
	{Name: "max_requests_per_second", Aliases: []string{"requests_per_second"}, Env: []string{"DELTAVACUUM_MAX_REQUESTS_PER_SECOND"}, For: "all",
		Doc: "most HTTP requests per second to the bucket or container, from 0.1 to 100000: every attempt, listing page and batch delete waits for a token of one bucket shared by the process's stores there; the rate halves when the store throttles (429, 503) and climbs back to this ceiling (default: no ceiling, and the rate still falls when the store throttles)"},
}

// fabricRefused is why the keys of the Fabric notebook token service are refused.
const fabricRefused = "the Fabric notebook token service (fabric_token_service_url, fabric_workload_host, fabric_session_token, fabric_cluster_identifier) is internal to Fabric and not supported: " +
	"pass a token instead, --storage-option azure_storage_token with the value of notebookutils.credentials.getToken('storage')"

// SDKCredentialEnv are environment variables through which the cloud SDKs' default chains take a
// credential the user chose (beside the Env of the Credential keys): with one set, no other
// credential is added (Python takes a notebook's token only without them).
var SDKCredentialEnv = map[string][]string{
	"s3":    {"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"},
	"azure": {"AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE"},
	"gcs":   {"GOOGLE_APPLICATION_CREDENTIALS"},
}

// SDKSecretEnv are environment variables holding secrets that the cloud SDKs read
// themselves (Key.Env lists those this package reads): the command line keeps their values
// out of what it prints.
var SDKSecretEnv = []string{
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PASSWORD", "AZURE_PASSWORD",
}

var byName = func() map[string]*Key {
	m := map[string]*Key{}
	for i := range Keys {
		k := &Keys[i]
		m[k.Name] = k
		for _, a := range k.Aliases {
			m[a] = k
		}
	}
	return m
}()

// Canonical returns the canonical name of an option key (case-insensitive, aliases
// resolved), or false when it is not an option.
func Canonical(key string) (string, bool) {
	k, ok := byName[strings.ToLower(strings.TrimSpace(key))]
	if !ok {
		return "", false
	}
	return k.Name, true
}

// UnknownOptionError is the refusal of an option key that is none: it names the key and, when
// it is a slip of a key or two away from one (a letter left out, two swapped), that one.
func UnknownOptionError(key string) error {
	key = strings.TrimSpace(key)
	if near := Suggest(key); near != "" {
		return fmt.Errorf("unknown storage option %q: did you mean %s? (deltavacuum storage-options lists the keys)", key, near)
	}
	return fmt.Errorf("unknown storage option %q (deltavacuum storage-options lists the keys)", key)
}

// Suggest returns the option key (a name or an alias) nearest to key when it is within a slip
// of a key or two (a swap is two), "" otherwise.
func Suggest(key string) string {
	key = strings.ToLower(strings.TrimSpace(key))
	if key == "" {
		return ""
	}
	return nearest.Name(key, slices.Collect(maps.Keys(byName)))
}

// ParseStorageOptions parses --storage-option flags, each KEY=VALUE. Keys are
// case-insensitive and may be aliases; a later flag overrides an earlier one. Errors name the
// key, never the value.
func ParseStorageOptions(flags []string) (Options, error) {
	o := Options{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, errors.New("storage option without '=': expected KEY=VALUE")
		}
		name, ok := Canonical(k)
		if !ok {
			return nil, UnknownOptionError(k)
		}
		o[name] = v
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o Options) validate() error {
	for k, v := range o {
		if key := byName[k]; key != nil && key.Refused != "" {
			return fmt.Errorf("storage option %s is not supported: %s", k, key.Refused)
		}
		switch k {
		case "aws_s3_path_style", "aws_virtual_hosted_style_request", "aws_allow_http", "aws_skip_signature",
			"azure_use_azure_cli", "azure_storage_use_emulator", "azure_allow_http", "azure_skip_signature",
			"azure_use_fabric_endpoint", "azure_disable_tagging",
			"google_allow_http", "google_skip_signature":
			if _, err := parseBool(v); err != nil {
				return fmt.Errorf("storage option %s: want true or false", k)
			}
		case "azure_object_id", "azure_msi_resource_id", "azure_federated_token_file", "azure_authority_host", "azure_container_name":
			// Each selects a credential or names a place: empty, it would fall back to another
			// credential or container without a word.
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("storage option %s is empty: give a value, or leave the option out", k)
			}
		case "concurrency", "delete_batch_size", "list_page_size":
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return fmt.Errorf("storage option %s: want a positive integer", k)
			}
		case "max_requests_per_second":
			r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(r) || math.IsInf(r, 0) || r < ratelimit.MinRate || r > ratelimit.MaxRate {
				return fmt.Errorf("storage option %s: want a number of requests per second from %v to %v (leave the option out for no ceiling)", k, ratelimit.MinRate, ratelimit.MaxRate)
			}
		case "max_retries":
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return fmt.Errorf("storage option %s: want an integer >= 0", k)
			}
		}
	}
	return nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "yes", "y", "on":
		return true, nil
	case "0", "f", "false", "no", "n", "off", "":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// WithEnv returns o completed with the environment: each option not in o takes the first set
// variable of its Key.Env. getenv is os.Getenv in Open.
func (o Options) WithEnv(getenv func(string) string) Options {
	out := Options{}
	for _, k := range Keys {
		for _, e := range k.Env {
			if v := getenv(e); v != "" {
				out[k.Name] = v
				break
			}
		}
	}
	for k, v := range o {
		out[k] = v
	}
	return out
}

// Redacted returns o with the values of secret options replaced by "****".
func (o Options) Redacted() map[string]string {
	out := make(map[string]string, len(o))
	for k, v := range o {
		if key, ok := byName[k]; !ok || key.Secret {
			v = "****" // unknown keys are not shown either
		}
		out[k] = v
	}
	return out
}

// String lists the options, sorted, secrets redacted: "aws_region=eu-west-1 aws_secret_access_key=****".
func (o Options) String() string {
	r := o.Redacted()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + r[k]
	}
	return strings.Join(parts, " ")
}

// GoString is String: %#v does not print secrets either.
func (o Options) GoString() string { return "location.Options{" + o.String() + "}" }

// Bool is the value of a boolean option (false when unset).
func (o Options) Bool(key string) bool {
	b, _ := parseBool(o[key])
	return b
}

// Int is the value of an integer option (0 when unset).
func (o Options) Int(key string) int {
	n, _ := strconv.Atoi(o[key])
	return n
}
