package graph

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/scalar"
)

// scalarInputs are the unmarshallers of the custom scalars that arguments
// take, keyed by scalar name (the bindings of gqlgen.yml). A variable or a
// literal of one of them is checked before execution, so that a bad value is
// refused as a whole request naming the variable or the argument, not as a
// field error of one field.
var scalarInputs = map[string]func(any) error{
	"DateTime": func(v any) error { _, err := scalar.UnmarshalDateTime(v); return err },
	"Date":     func(v any) error { _, err := scalar.UnmarshalDate(v); return err },
	"Int64":    func(v any) error { _, err := scalar.UnmarshalInt64(v); return err },
}

// exactVariables refuses, before execution, an operation whose variables
// hold a value that the schema does not take exactly. gqlparser matches enum
// values of variables case-insensitively ("CRYPTO" for crypto), and gqlgen's
// unmarshaller then finds no Go value for the spelling and passes the zero
// value on: a filter silently dropped. GraphQL enum values are exact, so any
// other spelling, in a list or an input object too, is bad_request naming
// the variable. Custom scalars are checked by their unmarshallers likewise.
// Literals need no check here: the validator matches literal enum values
// exactly.
type exactVariables struct {
	schema *ast.Schema // set by Validate when the extension is added
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*exactVariables)(nil)

func (*exactVariables) ExtensionName() string { return "ExactVariables" }

func (x *exactVariables) Validate(es graphql.ExecutableSchema) error {
	x.schema = es.Schema()
	return nil
}

func (x *exactVariables) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	for _, def := range opCtx.Operation.VariableDefinitions {
		// Variables holds the coerced values, defaults included.
		v, ok := opCtx.Variables[def.Variable]
		if !ok {
			continue
		}
		if err := x.check(def.Type, "$"+def.Variable, v, def.Variable); err != nil {
			return refusal(err)
		}
	}
	if err := checkScalarLiterals(opCtx.Doc, opCtx.Operation); err != nil {
		return refusal(err)
	}
	return nil
}

// check checks v, the value at path (such as $assets[1]) of the variable
// named variable, against typ.
func (x *exactVariables) check(typ *ast.Type, path string, v any, variable string) *apperr.Error {
	if v == nil {
		return nil // nullability is the validator's business
	}
	if typ.Elem != nil {
		// The validator turns a single value into a list of one, of its
		// own element type.
		items := reflect.ValueOf(v)
		if items.Kind() != reflect.Slice {
			return x.check(typ.Elem, path, v, variable)
		}
		for i := range items.Len() {
			if err := x.check(typ.Elem, path+"["+strconv.Itoa(i)+"]", items.Index(i).Interface(), variable); err != nil {
				return err
			}
		}
		return nil
	}
	def := x.schema.Types[typ.NamedType]
	if def == nil {
		return nil
	}
	switch def.Kind {
	case ast.Enum:
		s, _ := v.(string)
		if def.EnumValues.ForName(s) != nil {
			return nil
		}
		names := make([]string, len(def.EnumValues))
		for i, e := range def.EnumValues {
			names[i] = e.Name
		}
		return apperr.Invalid(variable, "variable %s: %s is not a value of %s; enum values are case-sensitive: one of %s",
			path, quoteValue(v), def.Name, strings.Join(names, ", "))
	case ast.Scalar:
		check := scalarInputs[def.Name]
		if check == nil {
			return nil
		}
		if err := check(v); err != nil {
			msg := err.Error()
			if ae := apperr.As(err); ae != nil {
				msg = ae.Message
			}
			return &apperr.Error{Code: apperr.BadRequest, Param: variable,
				Message: fmt.Sprintf("variable %s: %s", path, msg), Err: err}
		}
	case ast.InputObject:
		fields, _ := v.(map[string]any)
		for _, f := range def.Fields {
			if fv, ok := fields[f.Name]; ok {
				if err := x.check(f.Type, path+"."+f.Name, fv, variable); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// quoteValue shows a variable's value in a message, shortened.
func quoteValue(v any) string {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}

// sinceBound is the created_at bound of a since argument. created_at is
// stored to the microsecond, and a time sent to PostgreSQL is truncated to
// the microsecond, so a since between two microseconds would take in the
// rows of the earlier one, created before it: the bound is rounded up.
func sinceBound(since time.Time) time.Time {
	if t := since.Truncate(time.Microsecond); !t.Equal(since) {
		return t.Add(time.Microsecond)
	}
	return since
}
