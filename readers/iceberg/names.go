package iceberg

import (
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// NameKind says which writer's naming a metadata file follows.
type NameKind int

const (
	// NameOther is a *.metadata.json without a version in its name.
	NameOther NameKind = iota
	// NameHadoop is v<N>.metadata.json or v<N>.gz.metadata.json (Iceberg's Hadoop tables, XTable).
	NameHadoop
	// NameUniForm is v<N>-<uuid>.metadata.json (Delta UniForm).
	NameUniForm
	// NameSequence is <N>-<uuid>.metadata.json with N of five digits or more (Iceberg's
	// catalogs in Java and Python, Snowflake).
	NameSequence
	// NameNumber is <N>.metadata.json (the shape Fabric's documentation shows).
	NameNumber
)

func (k NameKind) String() string {
	switch k {
	case NameHadoop:
		return "v<N>.metadata.json"
	case NameUniForm:
		return "v<N>-<uuid>.metadata.json"
	case NameSequence:
		return "<N>-<uuid>.metadata.json"
	case NameNumber:
		return "<N>.metadata.json"
	}
	return "*.metadata.json"
}

const metadataSuffix = ".metadata.json"

// VersionHintName is the name of Iceberg's version hint file, beside the metadata files.
const VersionHintName = "version-hint.text"

// parseName reads the version in a metadata file's name. ok is false for a name that is not a
// metadata file at all; version is -1 for NameOther. A compressed file (.gz.metadata.json) is
// reported with gz set.
func parseName(name string) (kind NameKind, version int64, gz, ok bool) {
	stem, found := strings.CutSuffix(name, metadataSuffix)
	if !found || stem == "" {
		return 0, 0, false, false
	}
	if s, isGz := strings.CutSuffix(stem, ".gz"); isGz {
		stem, gz = s, true
	}
	if rest, v := strings.CutPrefix(stem, "v"); v {
		digits, uuid, hasUUID := strings.Cut(rest, "-")
		if n, ok := parseVersion(digits); ok {
			switch {
			case !hasUUID:
				return NameHadoop, n, gz, true
			case deltalog.IsUUID(uuid):
				return NameUniForm, n, gz, true
			}
		}
		return NameOther, -1, gz, true
	}
	digits, uuid, hasUUID := strings.Cut(stem, "-")
	if n, ok := parseVersion(digits); ok {
		switch {
		case !hasUUID:
			return NameNumber, n, gz, true
		case len(digits) >= 5 && deltalog.IsUUID(uuid):
			return NameSequence, n, gz, true
		}
	}
	return NameOther, -1, gz, true
}

// parseVersion reads a non-negative decimal number of at most 18 digits (no sign, no spaces).
func parseVersion(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
