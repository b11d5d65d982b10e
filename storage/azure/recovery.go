package azure

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// What the service keeps of deleted blobs, and bringing them back (storage.RecoveryProber,
// storage.Restorer through blobstore.Recoverer).
//
// The three requests the SDK cannot make as needed go through a pipeline of their own, with
// the Blob client's credentials, transport and retry policy (as the DFS request does):
// Get Blob Service Properties (the SDK's service client would need a second set of
// credentials), List Blobs with include=deleted,versions (the SDK drops the DeletionId that a
// hierarchical-namespace account lists for a soft-deleted path) and Undelete Blob with
// x-ms-undelete-source (which the SDK cannot send).

var (
	_ blobstore.Recoverer = (*backend)(nil)
	_ blobstore.Copier    = (*backend)(nil)
)

// OneLakeSoftDeleteDays is OneLake's default retention of deleted files: "Soft delete is
// turned on for each workspace by default with a seven-day retention period"
// (https://learn.microsoft.com/fabric/onelake/configure-soft-delete); files are restored with
// the Blob API (https://learn.microsoft.com/fabric/onelake/soft-delete, "Recover deleted files
// in OneLake"). A workspace admin can
// set 1 to 365 days or turn it off, in the Fabric portal or the Fabric REST API, which the
// storage endpoint does not expose.
const OneLakeSoftDeleteDays = 7

// recoveryClient holds what Recovery and Restore need beyond the container client.
type recoveryClient struct {
	serviceURL string // the Blob endpoint, without a trailing '/'
	container  string
	root       string // the store's root: "" or ending in '/'
	oneLake    bool
	sas        bool // the store authenticates with a SAS
	pl         runtime.Pipeline
	// pollBase is the first wait between polls of a pending copy (doubled up to 2 s).
	pollBase time.Duration
}

// setupRecovery is called by New.
func (b *backend) setupRecovery(serviceURL, root string, auth policy.Policy, copts azcore.ClientOptions) {
	var perRetry []policy.Policy
	if auth != nil {
		perRetry = append(perRetry, auth)
	}
	b.rec = &recoveryClient{
		serviceURL: strings.TrimSuffix(serviceURL, "/"),
		container:  b.container,
		root:       root,
		oneLake:    isOneLakeEndpoint(serviceURL),
		sas:        isSAS(auth),
		pl:         runtime.NewPipeline("deltavacuum-azure-recovery", "v1", runtime.PipelineOptions{PerRetry: perRetry}, &copts),
		pollBase:   200 * time.Millisecond,
	}
}

func isSAS(auth policy.Policy) bool {
	_, ok := auth.(sasPolicy)
	return ok
}

// isOneLakeEndpoint reports whether a Blob endpoint URL is OneLake's (global or regional).
func isOneLakeEndpoint(serviceURL string) bool {
	u, err := url.Parse(serviceURL)
	return err == nil && isOneLake(u) && strings.HasSuffix(strings.ToLower(u.Hostname()), ".fabric.microsoft.com")
}

// blobVersion is the x-ms-version of the requests made here: 2020-08-04 or later lists the
// DeletionId of hierarchical-namespace paths and takes x-ms-undelete-source.
const blobVersion = dfsVersion

func (r *recoveryClient) do(ctx context.Context, method, u string, hdr map[string]string) (*http.Response, error) {
	return send(ctx, r.pl, method, u, hdr)
}

// send makes one REST request (x-ms-version blobVersion, and hdr) on pl.
func send(ctx context.Context, pl runtime.Pipeline, method, u string, hdr map[string]string) (*http.Response, error) {
	req, err := runtime.NewRequest(ctx, method, u)
	if err != nil {
		return nil, err
	}
	req.Raw().Header.Set("x-ms-version", blobVersion)
	for k, v := range hdr {
		req.Raw().Header.Set(k, v)
	}
	return pl.Do(req)
}

// call sends a request whose answer has no body worth reading: nil for the status want,
// otherwise the service's error, as op of name.
func call(ctx context.Context, pl runtime.Pipeline, method, u string, hdr map[string]string, op, name string, want int) error {
	resp, err := send(ctx, pl, method, u, hdr)
	if err != nil {
		return wrap(op, name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == want {
		return nil
	}
	return wrap(op, name, runtime.NewResponseError(resp))
}

// serviceProperties is the part of Get Blob Service Properties read here.
type serviceProperties struct {
	XMLName               xml.Name `xml:"StorageServiceProperties"`
	DeleteRetentionPolicy *struct {
		Enabled string `xml:"Enabled"`
		Days    string `xml:"Days"`
	} `xml:"DeleteRetentionPolicy"`
}

// maxBody bounds what is read of an XML answer: a listing page of 5000 blobs is some MiB.
const maxBody = 64 << 20

// softDeleteDays reads the blob soft-delete policy (Get Blob Service Properties): the
// retention in days, 0 when off.
func (r *recoveryClient) softDeleteDays(ctx context.Context) (int, error) {
	resp, err := r.do(ctx, http.MethodGet, r.serviceURL+"/?restype=service&comp=properties", nil)
	if err != nil {
		return 0, wrap("get service properties", "", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, wrap("get service properties", "", runtime.NewResponseError(resp))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, wrap("get service properties", "", err)
	}
	return parseSoftDeleteDays(body)
}

// errNoPolicy: the service properties have no DeleteRetentionPolicy. Azure always lists it;
// on an account it means off, on OneLake (whose setting is the workspace's) nothing.
var errNoPolicy = errors.New("the blob service properties have no DeleteRetentionPolicy")

func parseSoftDeleteDays(body []byte) (int, error) {
	var p serviceProperties
	if err := xml.Unmarshal(body, &p); err != nil {
		return 0, fmt.Errorf("unparsable blob service properties: %v", err)
	}
	drp := p.DeleteRetentionPolicy
	if drp == nil {
		return 0, errNoPolicy
	}
	switch strings.TrimSpace(drp.Enabled) {
	case "false":
		return 0, nil
	case "true":
		days, err := strconv.Atoi(strings.TrimSpace(drp.Days))
		if err != nil || days < 1 || days > 365 {
			return 0, fmt.Errorf("blob service properties: soft delete on with a retention of %q days, not 1 to 365", drp.Days)
		}
		return days, nil
	default:
		return 0, fmt.Errorf("blob service properties: DeleteRetentionPolicy Enabled is %q, not true or false", drp.Enabled)
	}
}

// Recovery implements blobstore.Recoverer. Soft delete is read from Get Blob Service
// Properties (DeleteRetentionPolicy); versioning, an account setting those properties do not
// carry, from the data plane: a blob written while versioning is on has a version id
// (x-ms-version-id on a HEAD). The blob examined is _delta_log/_last_checkpoint, rewritten at
// every checkpoint and so recent, else the first blob listed under _delta_log/ (the oldest
// commit kept) or under the root.
func (b *backend) Recovery(ctx context.Context) storage.Recovery {
	r := b.rec
	days, err := r.softDeleteDays(ctx)
	if errors.Is(err, errNoPolicy) && !r.oneLake {
		days, err = 0, nil
	}
	if r.oneLake {
		switch {
		case err == nil && days > 0:
			return storage.Recovery{Kind: storage.RecoverySoftDelete, Days: days, Detail: fmt.Sprintf("OneLake soft delete: deleted files are kept %d days (blob service properties)", days)}
		case err == nil:
			return storage.Recovery{Kind: storage.RecoveryNone, Detail: "OneLake soft delete is off (blob service properties)"}
		}
		return storage.Recovery{Kind: storage.RecoverySoftDelete, Days: OneLakeSoftDeleteDays, Detail: fmt.Sprintf(
			"OneLake keeps deleted files %d days by default (the workspace setting, 1 to 365 days or off, is in the Fabric portal under Workspace settings > OneLake, and could not be read here: %v)",
			OneLakeSoftDeleteDays, err)}
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusForbidden {
			return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: fmt.Sprintf(
				"the blob soft-delete policy could not be read (%v): Get Blob Service Properties is an account-level read: it needs the account key, an account SAS with the service resource type (srt=s) and read permission, or a Microsoft Entra role assigned on the storage account, not only on the container (a service SAS or a container-scoped role cannot)",
				err)}
		}
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: fmt.Sprintf("the blob soft-delete policy could not be read: %v", err)}
	}
	soft := "blob soft delete is off"
	if days > 0 {
		soft = fmt.Sprintf("blob soft delete keeps deleted blobs %d days", days)
	}
	versioned, examined, verr := b.versioning(ctx)
	switch {
	case verr != nil && days > 0:
		return storage.Recovery{Kind: storage.RecoverySoftDelete, Days: days, Detail: soft + "; whether versioning is on could not be told: " + verr.Error()}
	case verr != nil:
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: soft + "; whether versioning is on could not be told: " + verr.Error()}
	case versioned:
		return storage.Recovery{Kind: storage.RecoveryVersioning, Detail: fmt.Sprintf("blob versioning is on (%s has a version id): a deleted blob is kept as a previous version until a lifecycle rule or a user deletes it; %s", examined, soft)}
	case days > 0:
		return storage.Recovery{Kind: storage.RecoverySoftDelete, Days: days, Detail: fmt.Sprintf("%s; versioning is off (%s has no version id)", soft, examined)}
	}
	return storage.Recovery{Kind: storage.RecoveryNone, Detail: fmt.Sprintf("%s and versioning is off (%s has no version id)", soft, examined)}
}

// versioning tells whether blob versioning is on from the version id of a recently written
// blob under the root.
func (b *backend) versioning(ctx context.Context) (on bool, examined string, err error) {
	name := b.rec.root + "_delta_log/_last_checkpoint"
	on, err = b.hasVersionID(ctx, name)
	if err == nil || !errors.Is(err, storage.ErrNotExist) {
		return on, name, err
	}
	for _, prefix := range []string{b.rec.root + "_delta_log/", b.rec.root} {
		var found string
		err := b.List(ctx, prefix, blobstore.ListOptions{Limit: 100}, func(p blobstore.Page) error {
			for _, e := range p.Entries {
				if !e.Dir && !strings.HasSuffix(e.Name, "/") {
					found = e.Name
					return blobstore.ErrStop
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, blobstore.ErrStop) && !errors.Is(err, storage.ErrNotExist) {
			return false, prefix, err
		}
		if found != "" {
			on, err = b.hasVersionID(ctx, found)
			return on, found, err
		}
	}
	return false, "", errors.New("no blob under the root to examine")
}

func (b *backend) hasVersionID(ctx context.Context, name string) (bool, error) {
	resp, err := b.cc.NewBlobClient(name).GetProperties(ctx, nil)
	if err != nil {
		return false, wrap("head", name, err)
	}
	return resp.VersionID != nil && *resp.VersionID != "", nil
}

// keptBlob is one entry of a listing with include=deleted,versions.
type keptBlob struct {
	Name struct {
		Encoded bool   `xml:"Encoded,attr"`
		Text    string `xml:",chardata"`
	} `xml:"Name"`
	Deleted          bool   `xml:"Deleted"`
	Snapshot         string `xml:"Snapshot"`
	VersionID        string `xml:"VersionId"`
	IsCurrentVersion bool   `xml:"IsCurrentVersion"`
	DeletionID       string `xml:"DeletionId"`
	Properties       struct {
		ContentLength *int64 `xml:"Content-Length"`
		DeletedTime   string `xml:"DeletedTime"`
		ResourceType  string `xml:"ResourceType"`
	} `xml:"Properties"`
}

type keptPage struct {
	XMLName    xml.Name   `xml:"EnumerationResults"`
	Blobs      []keptBlob `xml:"Blobs>Blob"`
	NextMarker string     `xml:"NextMarker"`
}

// kept is a copy of a deleted blob that the service keeps.
type kept struct {
	versionID  string // a previous version; else a soft-deleted blob
	deletionID string // of a soft-deleted path on a hierarchical-namespace account
	size       int64
	deleted    time.Time
}

// listKept lists the previous versions and soft-deleted copies of exactly name.
func (r *recoveryClient) listKept(ctx context.Context, name string) ([]kept, error) {
	include := "deleted,versions"
	var out []kept
	marker := ""
	seen := map[string]bool{}
	for {
		q := url.Values{"restype": {"container"}, "comp": {"list"}, "prefix": {name}, "include": {include}}
		if marker != "" {
			q.Set("marker", marker)
		}
		resp, err := r.do(ctx, http.MethodGet, r.serviceURL+"/"+url.PathEscape(r.container)+"?"+q.Encode(), nil)
		if err != nil {
			return nil, wrap("list deleted", name, err)
		}
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if resp.StatusCode == http.StatusBadRequest && include != "deleted" && marker == "" {
			// An account that cannot list versions (versioning is not available on every
			// kind of account) still lists soft-deleted blobs.
			include = "deleted"
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body = io.NopCloser(strings.NewReader(string(body)))
			return nil, wrap("list deleted", name, runtime.NewResponseError(resp))
		}
		if rerr != nil {
			return nil, wrap("list deleted", name, rerr)
		}
		var page keptPage
		if err := xml.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("azure list deleted %s: unparsable answer: %v", name, err)
		}
		for _, kb := range page.Blobs {
			n := kb.Name.Text
			if kb.Name.Encoded {
				if n, err = url.PathUnescape(n); err != nil {
					return nil, fmt.Errorf("azure list deleted %s: undecodable name %q", name, kb.Name.Text)
				}
			}
			if n != name || kb.Snapshot != "" || kb.Properties.ResourceType == "directory" || kb.Properties.ContentLength == nil {
				continue
			}
			k := kept{size: *kb.Properties.ContentLength, deletionID: kb.DeletionID}
			switch {
			case kb.VersionID != "" && !kb.IsCurrentVersion && !kb.Deleted:
				k.versionID = kb.VersionID
			case kb.Deleted && kb.VersionID == "":
				if t, err := time.Parse(http.TimeFormat, kb.Properties.DeletedTime); err == nil {
					k.deleted = t
				}
			default:
				continue
			}
			out = append(out, k)
		}
		if page.NextMarker == "" {
			return out, nil
		}
		if seen[page.NextMarker] {
			return nil, fmt.Errorf("azure list deleted %s: the listing repeats its marker %q", name, page.NextMarker)
		}
		seen[page.NextMarker] = true
		marker = page.NextMarker
	}
}

// Restore implements blobstore.Recoverer: a previous version of d's size is copied back
// (conditionally: nothing written at the name since is replaced), else a soft-deleted copy
// of d's size is undeleted; the blob is then read back to check its size.
func (b *backend) Restore(ctx context.Context, d storage.Deleted) error {
	name := d.Key
	if _, err := b.Head(ctx, name); err == nil {
		return fmt.Errorf("restore %s: %w: an object was written there since the delete, and is kept", name, storage.ErrExist)
	} else if !errors.Is(err, storage.ErrNotExist) {
		return fmt.Errorf("restore %s: %w", name, err)
	}
	all, err := b.rec.listKept(ctx, name)
	if err != nil {
		return fmt.Errorf("restore %s: %w", name, err)
	}
	var version, soft *kept
	for i := range all {
		k := &all[i]
		if !d.SizeMatches(k.size) {
			continue
		}
		if k.versionID != "" {
			// Version ids are timestamps of one fixed-width format: the greatest is the newest.
			if version == nil || k.versionID > version.versionID {
				version = k
			}
		} else if soft == nil || k.deleted.After(soft.deleted) {
			soft = k
		}
	}
	switch {
	case version != nil:
		src, err := b.cc.NewBlobClient(name).WithVersionID(version.versionID)
		if err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
		if err := b.copyURL(ctx, src.URL(), name+" (version "+version.versionID+")", name); err != nil {
			return fmt.Errorf("restore %s from version %s: %w", name, version.versionID, err)
		}
	case soft != nil:
		if soft.deletionID != "" {
			if err := b.ensureParent(ctx, name); err != nil {
				return fmt.Errorf("restore %s: %w", name, err)
			}
		}
		if err := b.rec.undelete(ctx, name, soft.deletionID); err != nil {
			if pathConflict(err) {
				err = b.notDir(ctx, name, err)
			}
			return fmt.Errorf("restore %s: %w", name, err)
		}
	default:
		why := "the retention window passed, a lifecycle rule or a user removed it, or neither soft delete nor versioning was on when it was deleted"
		if len(all) > 0 {
			why = fmt.Sprintf("%d kept copies, none of %d bytes (the object at that name was another)", len(all), d.Size)
		}
		return fmt.Errorf("restore %s: %w: no previous version or soft-deleted copy of %d bytes is kept: %s", name, storage.ErrNotExist, d.Size, why)
	}
	e, err := b.Head(ctx, name)
	if err != nil {
		return fmt.Errorf("restore %s: the service accepted the restore, but the blob cannot be read back: %v", name, err)
	}
	if e.Dir || !d.SizeMatches(e.Size) {
		return fmt.Errorf("restore %s: the blob restored has %d bytes, not %d", name, e.Size, d.Size)
	}
	return nil
}

// ensureParent creates the directory of name on a hierarchical-namespace account when it is
// gone (a vacuum deletes the directories it empties): a soft-deleted path cannot be restored
// into a missing directory, and Microsoft documents that a directory created with the
// original name serves (https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview).
func (b *backend) ensureParent(ctx context.Context, name string) error {
	dir := strings.TrimSuffix(storage.Dir(name), "/")
	if dir == "" {
		return nil
	}
	e, err := b.Head(ctx, dir)
	switch {
	case err == nil && e.Dir:
		return nil
	case err == nil:
		// Not ErrExist: nothing is at name, and a caller would take it for the file there.
		return &notDirError{name: name, file: dir}
	case !errors.Is(err, storage.ErrNotExist):
		return err
	case b.dfs == nil:
		return fmt.Errorf("its directory %s is gone, and there is no DFS endpoint to create it with (set azure_dfs_endpoint)", dir)
	}
	if err := b.dfs.createDir(ctx, dir); err != nil {
		return b.notDir(ctx, name, err) // a file further up: 409 PathConflict
	}
	return nil
}

// createDir creates the directory name and any missing parents (DFS Create Path,
// resource=directory), If-None-Match: * so that nothing there is reset; one there already
// (409 PathAlreadyExists) is fine.
func (d *dfsClient) createDir(ctx context.Context, name string) error {
	u := d.endpoint + "/" + url.PathEscape(d.filesystem) + "/" + escapePath(name) + "?resource=directory"
	err := call(ctx, d.pl, http.MethodPut, u, map[string]string{"If-None-Match": "*"}, "create directory", name, http.StatusCreated)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusConflict && e.Code == "PathAlreadyExists" {
		return nil
	}
	return err
}

// undelete restores a soft-deleted blob (Undelete Blob). On a hierarchical-namespace account
// the soft-deleted path is named by its DeletionId in x-ms-undelete-source ("blobPath?
// deletionid=ID", the path percent-encoded, without account or container), since a path can
// have been deleted several times.
func (r *recoveryClient) undelete(ctx context.Context, name, deletionID string) error {
	var hdr map[string]string
	if deletionID != "" {
		hdr = map[string]string{"x-ms-undelete-source": escapePath(name) + "?deletionid=" + url.QueryEscape(deletionID)}
	}
	u := r.serviceURL + "/" + url.PathEscape(r.container) + "/" + escapePath(name) + "?comp=undelete"
	err := call(ctx, r.pl, http.MethodPut, u, hdr, "undelete", name, http.StatusOK)
	var e *Error
	if errors.As(err, &e) {
		switch {
		case e.Status == http.StatusConflict && e.Code == "PathConflict":
			return err // an element of the path is not a directory: nothing is at name
		case e.Status == http.StatusConflict:
			return fmt.Errorf("%w: %w", storage.ErrExist, err)
		case e.Status == http.StatusNotImplemented:
			return fmt.Errorf("%w: %w", storage.ErrUnsupported, err)
		}
	}
	return err
}
