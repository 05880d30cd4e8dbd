package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/feedapi/feedapi/rest/contract"
)

// Builders of the JSON Schema 2020-12 objects (OpenAPI 3.1's dialect) the
// document is made of, over kin-openapi's types.

// props are the properties of an object schema.
type props = openapi3.Schemas

func types(t ...string) *openapi3.Types { x := openapi3.Types(t); return &x }

func ptr[T any](v T) *T { return &v }

// val wraps a schema written in place.
func val(s *openapi3.Schema) *openapi3.SchemaRef { return &openapi3.SchemaRef{Value: s} }

// ref refers to the component schema name.
func ref(name string) *openapi3.SchemaRef {
	return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name}
}

// refWith refers to the component schema name with a description of its
// own beside the reference, which OpenAPI 3.1 allows and kin-openapi
// writes out from the reference's fields.
func refWith(name, description string) *openapi3.SchemaRef {
	r := ref(name)
	r.Extensions = map[string]any{"description": description}
	return r
}

// object is a closed object schema: fields outside p are errors.
func object(description string, p props, required ...string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("object"), Description: description, Properties: p, Required: required,
		AdditionalProperties: openapi3.AdditionalProperties{Has: ptr(false)}})
}

// open is an object that takes any properties.
func open() openapi3.AdditionalProperties {
	return openapi3.AdditionalProperties{Has: ptr(true)}
}

func str(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string"), Description: description})
}

func integer(min float64, description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("integer"), Min: &min, Description: description})
}

func boolean(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("boolean"), Description: description})
}

func date(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string"), Format: "date", Description: description})
}

func enum(description string, values ...any) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string"), Enum: values, Description: description})
}

func patterned(pattern, description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string"), Pattern: pattern, Description: description})
}

func arrayOf(items *openapi3.SchemaRef, description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("array"), Items: items, Description: description})
}

// set is an array of distinct items.
func set(items *openapi3.SchemaRef, description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("array"), UniqueItems: true, Items: items, Description: description})
}

// anyOf is one of schemas.
func anyOf(description string, schemas ...*openapi3.SchemaRef) *openapi3.SchemaRef {
	return val(&openapi3.Schema{AnyOf: schemas, Description: description})
}

func null() *openapi3.SchemaRef { return val(&openapi3.Schema{Type: types("null")}) }

func id(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("integer"), Format: "int64", Min: ptr(1.0), Description: description})
}

// patternDateTime is the shape of every timestamp served. The patterns use
// only the syntax shared by ECMA-262, RE2 and PCRE, so that every tool
// reads them alike.
const patternDateTime = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`

func dateTime(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string"), Format: "date-time", Pattern: patternDateTime,
		Description: description + " UTC, `YYYY-MM-DDTHH:MM:SS.sssZ`."})
}

// nullableDateTime is a timestamp or null; it keeps the format, so that
// generated clients type it as a time like the timestamps never null.
func nullableDateTime(description string) *openapi3.SchemaRef {
	s := dateTime(description)
	s.Value.Type = types("string", "null")
	return s
}

func nullableString(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string", "null"), Description: description})
}

func nullableURL(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("string", "null"), Format: "uri", Description: description})
}

// money is an amount of US dollars: a double, which holds every amount
// served to the cent (15 significant digits). "At most two decimals" is
// said in words, not as multipleOf 0.01, which validators comparing binary
// floating point refuse for most amounts; it and plain notation are
// checked by the contract tests.
func money(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("number"), Format: "double",
		Description: description + " Raw US dollars in plain decimal notation (never exponent notation) with at most two decimals, exact to the cent; a 64-bit float (double) holds it exactly to the cent."})
}

func nullableMoney(description string) *openapi3.SchemaRef {
	m := money(description)
	m.Value.Type = types("number", "null")
	return m
}

// coinAmount is an amount of coins, or null.
func coinAmount(description string) *openapi3.SchemaRef {
	return val(&openapi3.Schema{Type: types("number", "null"), Format: "double", Min: ptr(0.0),
		Description: description + " Coins in plain decimal notation (never exponent notation) with at most eight decimals, exact in the JSON text."})
}

// content is a body of media type mediaType and schema s.
func content(mediaType string, s *openapi3.SchemaRef) openapi3.Content {
	return openapi3.Content{mediaType: &openapi3.MediaType{Schema: s}}
}

func jsonContent(s *openapi3.SchemaRef) openapi3.Content { return content(mediaJSON, s) }

// envelope is the success envelope around data: a pagination object on
// the paginated lists, null everywhere else.
func envelope(data *openapi3.SchemaRef, paginated bool, meta string) *openapi3.SchemaRef {
	pagination := val(&openapi3.Schema{Type: types("null"), Description: "Always null: this response is not paginated."})
	if paginated {
		pagination = ref("Pagination")
	}
	return object("A success envelope.", props{"data": data, "pagination": pagination, "meta": ref(meta)},
		"data", "pagination", "meta")
}

// coins is the coins field of posts and firehose messages.
func coins() *openapi3.SchemaRef {
	return set(patterned(contract.TickerPattern, ""),
		"Tickers of the coins the item is about (cashtags such as `$BTC`, and the names and tickers of the most traded assets), sorted; `[]` when none. Always sent; not listed as required so that answers of v1 before it stay valid.")
}
