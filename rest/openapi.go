package rest

import (
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/openapi"
)

// OpenAPIOptions are the facts of one deployment that its OpenAPI document
// depends on.
type OpenAPIOptions = openapi.Options

// BuildOpenAPI returns the OpenAPI 3.1.0 document served at
// GET /v1/openapi.json (package rest/openapi builds it from the contract's
// declarations); a RateLimit of 0 means auth.DefaultRateLimit.
//
// The document is the contract's reference: the tests of package rest
// check every response they produce against it (see
// validateAgainstOpenAPI in contract_test.go).
func BuildOpenAPI(o OpenAPIOptions) ([]byte, error) {
	if o.RateLimit <= 0 {
		o.RateLimit = auth.DefaultRateLimit
	}
	return openapi.Build(o)
}
