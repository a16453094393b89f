// Package sariftest validates SARIF logs against the official SARIF 2.1.0
// JSON schema, vendored from oasis-tcs/sarif-spec
// (sarif-2.1/schema/sarif-schema-2.1.0.json, the errata01 schema) so that
// tests run offline. It is for tests only.
package sariftest

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaID is the $id (draft-04 "id") of the vendored schema.
const SchemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

//go:embed testdata/sarif-schema-2.1.0.json
var schemaJSON []byte

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("reading the SARIF schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, fmt.Errorf("adding the SARIF schema: %w", err)
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		return nil, fmt.Errorf("compiling the SARIF schema: %w", err)
	}
	return s, nil
})

// Validate checks that data is a SARIF 2.1.0 log the official schema
// accepts, formats (uri, date-time) included.
func Validate(data []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("SARIF log is not JSON: %w", err)
	}
	return s.Validate(doc)
}
