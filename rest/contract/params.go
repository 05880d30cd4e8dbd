package contract

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/graph/apperr"
)

// Param is one query parameter an endpoint accepts and the GraphQL variable
// it sets. Parameters are strict: each problem is a 400 whose message names
// the parameter and what is allowed.
type Param struct {
	Name     string // in the query string
	Variable string // the GraphQL variable it sets
	// Default is the variable's value when the parameter is absent; nil
	// leaves it unset.
	Default any
	// Parse reads a value; false refuses it.
	Parse func(value string) (any, bool)
	// Allowed completes "<name> must be …" when Parse refuses a value.
	Allowed string
	// Paging marks a parameter that pages a list (limit, cursor, since_id,
	// after): a stream, which follows its own position, does not take it.
	Paging bool

	// The OpenAPI parameter: Component names it in components/parameters
	// (several endpoints share it), or is empty for one written in place.
	Component   string
	Description string
	Schema      *openapi3.Schema
}

// Invalid is the error for a refused value of p.
func (p Param) Invalid() *apperr.Error {
	return apperr.Invalid(p.Name, "%s must be %s", p.Name, p.Allowed)
}

// Parse checks a raw query string against params and returns the GraphQL
// variables they give. Unknown and repeated parameters are refused; checks
// run in a fixed order (unknown names alphabetically, then params in
// order), so a request with several problems always gets the same message.
func Parse(rawQuery string, params []Param) (map[string]any, error) {
	vars := make(map[string]any, len(params)+2)
	var values url.Values
	if rawQuery != "" {
		var err error
		values, err = url.ParseQuery(rawQuery)
		if err != nil {
			return nil, apperr.Invalid("", "the query string is malformed: use name=value pairs joined by & with percent-encoding")
		}
	}
	if unknown := unknownParams(values, params); len(unknown) > 0 {
		return nil, unknownParamError(unknown[0], params)
	}
	for _, p := range params {
		vs, ok := values[p.Name]
		switch {
		case !ok:
			if p.Default != nil {
				vars[p.Variable] = p.Default
			}
			continue
		case len(vs) > 1:
			return nil, apperr.Invalid(p.Name, "%s must be given at most once", p.Name)
		}
		v, ok := p.Parse(vs[0])
		if !ok {
			return nil, p.Invalid()
		}
		vars[p.Variable] = v
	}
	return vars, nil
}

func unknownParams(values url.Values, params []Param) []string {
	var unknown []string
	for name := range values {
		if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

func unknownParamError(name string, params []Param) error {
	shown := strconv.Quote(name)
	if len(params) == 0 {
		return apperr.Invalid(name, "unknown parameter %s: this endpoint takes no query parameters", shown)
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return apperr.Invalid(name, "unknown parameter %s: allowed are %s", shown, strings.Join(names, ", "))
}

// ParseID checks a path id: a positive integer that fits in int64.
func ParseID(v string) (int64, error) {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, apperr.Invalid("id", "id must be a positive integer")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Invalid("id", "id must be a positive integer")
	}
	return n, nil
}

// ParamNamed returns the parameter of params named name.
func ParamNamed(params []Param, name string) (Param, bool) {
	i := slices.IndexFunc(params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return params[i], true
}
