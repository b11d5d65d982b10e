package run

import (
	"cmp"
	"slices"
	"strings"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// UntrackedOf counts the files of plan that no commit names (vacuum.ReasonUntracked), with the
// folders holding the most of them: what failed or unfinished writers leave, which a run
// records (Record.Untracked) and the service watches from run to run. Nil for a LITE plan,
// which lists nothing and so cannot see them.
func UntrackedOf(plan *vacuum.Plan) (*Untracked, error) {
	if plan == nil || plan.Mode == vacuum.ModeLite {
		return nil, nil
	}
	u := &Untracked{Folders: []FolderCount{}}
	folders := map[string]*FolderCount{}
	err := plan.Files.Each(func(f vacuum.File) error {
		if f.Reason != vacuum.ReasonUntracked {
			return nil
		}
		u.Files++
		u.Bytes += f.Size
		dir := ""
		if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
			dir = f.Path[:i]
		}
		c, ok := folders[dir]
		if !ok {
			c = &FolderCount{Folder: strings.Clone(dir)}
			folders[c.Folder] = c
		}
		c.Files++
		c.Bytes += f.Size
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := make([]FolderCount, 0, len(folders))
	for _, c := range folders {
		all = append(all, *c)
	}
	slices.SortFunc(all, func(a, b FolderCount) int {
		if c := cmp.Compare(b.Files, a.Files); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return strings.Compare(a.Folder, b.Folder)
	})
	u.NumFolders = int64(len(all))
	u.Folders = append(u.Folders, all[:min(len(all), MaxUntrackedFolders)]...)
	return u, nil
}
