package cli

// The command line opens every kind of location: it links every object-store backend
// (a library user imports only the backends it needs; see storage/location.Register).
import _ "github.com/deltavacuum/deltavacuum/storage/location/all"
