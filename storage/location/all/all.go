// Package all links every object-store backend into the program: importing it registers the
// S3, Azure and GCS backends with package location (the local backend is always there).
//
//	import _ "github.com/deltavacuum/deltavacuum/storage/location/all"
package all

import (
	_ "github.com/deltavacuum/deltavacuum/storage/azure" // abfss://, wasbs://, az://, https:// (Azure, OneLake)
	_ "github.com/deltavacuum/deltavacuum/storage/gcs"   // gs://
	_ "github.com/deltavacuum/deltavacuum/storage/s3"    // s3://, s3a://
)
