package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// decision is the planner's classification of one listed entry: the rule that decided it and,
// for a file it deletes, the reason; with what the walk needs for its bookkeeping.
type decision struct {
	rule   Rule
	reason Reason // what an unreferenced file is deleted as
	h      uint64 // the hash of a visible file's key
	kept   int    // its place in the protected set, when rule is RuleLive (read by observe for no other rule)
	// nestedLog: a _delta_log below the root; the folder it is in is another table.
	nestedLog bool
	// companion: a hidden checksum companion that goes with its file, should it be deleted.
	companion bool
	// describe: a file listed without its size and time that the log does not protect; the
	// walk asks the store for them and classifies it again.
	describe bool
	// readers: the readers that keep the entry (RuleRead; rules_readers.go).
	readers uint64
}

// classify is the one classification of a listed entry (FULL's listing or an inventory laid
// out as one), in the order the rules apply (doc.go lists each with its test):
//
//  1. inside a nested table being skipped (nested: its folder key, "" when none): kept;
//  2. a hidden name (rules_hidden.go): a _delta_log below the root makes its folder a nested
//     table (rules_nested.go); any other is kept, a hidden directory not entered, after the
//     refusal of a link into the table (rules_links.go); a hidden checksum companion may go
//     with its file (rules_checksum.go);
//  3. a directory: entered; deleted when the walk leaves it empty (rules_dirs.go);
//  4. a file the log protects (rules_protected.go): kept;
//  5. a link into the table the log names live files through: the run is refused;
//  6. not older than the cutoff (rules_age.go): kept;
//  7. a protected key in another spelling (rules_fold.go): kept;
//  8. a protected path passes through it (rules_protected.go): kept;
//  9. a reader still needs it (rules_readers.go): kept, naming the reader (a reader's folder
//     is not entered);
//  10. otherwise deleted, as what rules_reason.go says.
//
// parent is the key of the folder the entry is listed in ("" for the root). It does no I/O;
// the walk keeps the folders, the counters and the pairs of checksum companions.
func (p *Planner) classify(o storage.Object, parent, nested string) (decision, error) {
	if nested != "" && strings.HasPrefix(o.Key, nested) {
		return decision{rule: RuleNestedTable}, nil
	}
	name := o.Name()
	if p.hidden.hidden(name) {
		if nestedTableLog(name, parent) {
			return decision{rule: RuleNestedTable, nestedLog: true}, nil
		}
		if err := p.checkLinkInto(o); err != nil {
			return decision{}, err
		}
		return decision{rule: RuleHidden, companion: !o.IsDir && p.companionGoes(o.Key, name)}, nil
	}
	if o.IsDir {
		if p.readers != nil {
			if m := p.readers.inFolder(o.Key); m != 0 {
				return decision{rule: RuleRead, readers: m}, nil
			}
		}
		return decision{rule: RuleDirectory}, nil
	}
	h := p.hash(o.Key)
	if at, live := p.keep.find(h); live {
		return decision{rule: RuleLive, h: h, kept: at}, nil // refined by observe when an observer asks why
	}
	if o.NoStat {
		return decision{h: h, describe: true}, nil
	}
	if err := p.checkLinkInto(o); err != nil {
		return decision{}, err // whatever the link's age or spelling: the refusal comes first
	}
	switch {
	case !p.oldEnough(o.ModTime):
		return decision{rule: RuleTooNew, h: h}, nil
	case p.keptByFold(o.Key):
		return decision{rule: RuleOtherSpelling, h: h}, nil // a live file's key in another spelling (case, normalization)
	case p.pathBelow(o.Key + "/"):
		return decision{rule: RuleProtectedBelow, h: h}, nil
	}
	if m := p.readBy(o.Key, h); m != 0 {
		return decision{rule: RuleRead, reason: p.reason(o.Key, h), h: h, readers: m}, nil
	}
	return decision{rule: RuleUnreferenced, reason: p.reason(o.Key, h), h: h}, nil
}
