package azure

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// dfsVersion is the x-ms-version of the ADLS Gen2 requests.
const dfsVersion = "2023-11-03"

// dfsClient makes the one ADLS Gen2 (DFS) request the store needs: the non-recursive delete
// of an empty hierarchical-namespace directory. (The azdatalake SDK module is not used: this
// is a single REST call, on the same azcore pipeline, retry policy and transport as the Blob
// client.)
type dfsClient struct {
	endpoint   string // https://ACCOUNT.dfs.core.windows.net
	filesystem string
	pl         runtime.Pipeline
}

func newDFS(endpoint, filesystem string, auth policy.Policy, copts azcore.ClientOptions) *dfsClient {
	var perRetry []policy.Policy
	if auth != nil {
		perRetry = append(perRetry, auth)
	}
	pl := runtime.NewPipeline("deltavacuum-azure-dfs", "v1", runtime.PipelineOptions{PerRetry: perRetry}, &copts)
	return &dfsClient{endpoint: strings.TrimSuffix(endpoint, "/"), filesystem: filesystem, pl: pl}
}

// escapePath escapes each '/'-separated segment of name.
func escapePath(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// deleteDir deletes the directory name if it is empty: 409 DirectoryNotEmpty otherwise
// (storage.ErrNotEmpty), 404 PathNotFound when it is gone (storage.ErrNotExist).
func (d *dfsClient) deleteDir(ctx context.Context, name string) error {
	u := d.endpoint + "/" + url.PathEscape(d.filesystem) + "/" + escapePath(name) + "?recursive=false"
	req, err := runtime.NewRequest(ctx, http.MethodDelete, u)
	if err != nil {
		return wrap("delete directory", name, err)
	}
	req.Raw().Header.Set("x-ms-version", dfsVersion)
	resp, err := d.pl.Do(req)
	if err != nil {
		return wrap("delete directory", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return wrap("delete directory", name, runtime.NewResponseError(resp))
}

// sasPolicy appends a SAS token to each request's query.
type sasPolicy string

func (p sasPolicy) Do(req *policy.Request) (*http.Response, error) {
	u := req.Raw().URL
	if u.RawQuery == "" {
		u.RawQuery = string(p)
	} else {
		u.RawQuery += "&" + string(p)
	}
	return req.Next()
}

func bearerPolicy(cred azcore.TokenCredential, allowHTTP bool) policy.Policy {
	return runtime.NewBearerTokenPolicy(cred, []string{"https://storage.azure.com/.default"},
		&policy.BearerTokenOptions{InsecureAllowCredentialWithHTTP: allowHTTP})
}

// sharedKeyPolicy signs requests with Shared Key (the scheme of the Blob and DFS APIs).
type sharedKeyPolicy struct {
	account string
	key     []byte
}

func newSharedKeyPolicy(account, key string) (*sharedKeyPolicy, error) {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, errors.New("the account key is not valid base64")
	}
	return &sharedKeyPolicy{account: account, key: k}, nil
}

func (p *sharedKeyPolicy) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	mac := hmac.New(sha256.New, p.key)
	mac.Write([]byte(p.stringToSign(r)))
	r.Header.Set("Authorization", "SharedKey "+p.account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return req.Next()
}

func (p *sharedKeyPolicy) stringToSign(r *http.Request) string {
	h := r.Header
	cl := h.Get("Content-Length")
	if cl == "" && r.ContentLength > 0 {
		cl = strconv.FormatInt(r.ContentLength, 10)
	}
	if cl == "0" {
		cl = ""
	}
	var xms []string
	for k := range h {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-ms-") {
			xms = append(xms, lk)
		}
	}
	sort.Strings(xms)
	var ch strings.Builder
	for _, k := range xms {
		ch.WriteString(k + ":" + strings.TrimSpace(strings.Join(h.Values(k), ",")) + "\n")
	}
	var cr strings.Builder
	cr.WriteString("/" + p.account)
	if r.URL.Path == "" {
		cr.WriteString("/")
	} else {
		cr.WriteString(r.URL.EscapedPath())
	}
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vs := q[k]
		sort.Strings(vs)
		cr.WriteString("\n" + strings.ToLower(k) + ":" + strings.Join(vs, ","))
	}
	return strings.Join([]string{
		r.Method,
		h.Get("Content-Encoding"),
		h.Get("Content-Language"),
		cl,
		h.Get("Content-MD5"),
		h.Get("Content-Type"),
		"", // Date: x-ms-date is set
		h.Get("If-Modified-Since"),
		h.Get("If-Match"),
		h.Get("If-None-Match"),
		h.Get("If-Unmodified-Since"),
		h.Get("Range"),
		ch.String() + cr.String(),
	}, "\n")
}
