package vacuum

import (
	"fmt"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Symbolic links (section 7): never followed, for listing or deleting. A link that a protected
// path passes through is kept (pathBelow: the planner's RuleProtectedBelow); a link into the
// table through which the log names live files refuses the run.

// LinkIntoTableError is the refusal of a table whose live files have two names: a symbolic
// link inside it, through which the log names live files, points to another place inside it.
type LinkIntoTableError struct {
	Table, Link string
}

func (e *LinkIntoTableError) Error() string {
	return fmt.Sprintf("table %s: %s is a symbolic link to a folder inside the table, and the log names live files through it: "+
		"a listing that never follows links sees those files a second time under their real names, where no action names them. "+
		"Nothing was deleted. Replace the link with the folder it points to (or rewrite the table), then vacuum again", e.Table, e.Link)
}

// checkLinkInto refuses a symbolic link that points inside the table when the log names live
// files through it: those files are also listed under their real names, which no action
// names, and would be deleted as untracked. It applies to every link the listing reports,
// young or old, hidden or not (a hidden link is never descended into, but the files it
// points to are listed where they really are).
func (p *Planner) checkLinkInto(o storage.Object) error {
	if o.IsLink && o.LinkIntoStore && p.pathBelow(o.Key+"/") {
		return &LinkIntoTableError{Table: p.snap.Location, Link: o.Key}
	}
	return nil
}
