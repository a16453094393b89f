// Package unlisted is a product package without a row.
package unlisted
