// Package insight tells what a VACUUM of a Delta table would reclaim, where, since when and
// at what cost, and why the planner keeps or deletes any one path. It is shared by the command
// line, the SQL front end and servers, which only render its values.
//
// Every figure comes from the planner's own verdicts (vacuum.Options.Observe): this package
// never decides by itself whether a file is deleted, and it never deletes or writes anything.
package insight
