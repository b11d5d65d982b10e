// Package tables holds the tables `deltavacuum serve` maintains: those of its configuration and
// those its discover roots find, each with its SQL session (session.Session, as the CLI opens
// its own tables) and its store's requests-per-second limit as the session's transport.
//
// It opens tables and lists discover roots; it never runs, plans or deletes anything (the
// runner, service/runner, does, through the library) and knows nothing of the API or the page.
// Its one use of net/http is the type of the transport wrapper the stores' clients take.
package tables
