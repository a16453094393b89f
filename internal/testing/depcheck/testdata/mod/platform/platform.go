// Package platform is a value package that imports net/http: a ban of its
// row, and HTTP outside registry.
package platform

import "net/http"

// Get is a value package speaking HTTP.
var Get = http.Get
