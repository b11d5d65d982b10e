package service

// The service opens the tables its configuration names, on any store: it links every backend.
import _ "github.com/deltavacuum/deltavacuum/storage/location/all"
