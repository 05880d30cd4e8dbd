package graph

import (
	"encoding/json"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/graph/apperr"
)

// checkScalarLiterals refuses, before execution, a literal of a custom
// scalar (scalarInputs) that its unmarshaller does not take: an Int64
// beyond 64 bits, a fraction or a word, a DateTime that is no date-time.
// The validator lets any literal through for a custom scalar, and gqlparser
// panics on an integer literal beyond 64 bits when the argument is read; so
// every argument value of the operation, fragments included, is checked
// here, and a refusal names the argument as a variable's names the
// variable.
func checkScalarLiterals(doc *ast.QueryDocument, op *ast.OperationDefinition) *apperr.Error {
	seen := map[string]bool{}
	var walkSet func(ast.SelectionSet) *apperr.Error
	walkSet = func(set ast.SelectionSet) *apperr.Error {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				for _, arg := range s.Arguments {
					if err := checkScalarValue(arg.Name, arg.Value); err != nil {
						return err
					}
				}
				if err := walkSet(s.SelectionSet); err != nil {
					return err
				}
			case *ast.InlineFragment:
				if err := walkSet(s.SelectionSet); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				if seen[s.Name] {
					continue
				}
				seen[s.Name] = true
				if f := doc.Fragments.ForName(s.Name); f != nil {
					if err := walkSet(f.SelectionSet); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return walkSet(op.SelectionSet)
}

// checkScalarValue checks the literals of custom scalars in v, the value
// of the argument named arg.
func checkScalarValue(arg string, v *ast.Value) *apperr.Error {
	if v == nil {
		return nil
	}
	for _, c := range v.Children {
		if err := checkScalarValue(arg, c.Value); err != nil {
			return err
		}
	}
	if v.ExpectedType == nil {
		return nil
	}
	check := scalarInputs[v.ExpectedType.NamedType]
	if check == nil {
		return nil
	}
	var in any
	switch v.Kind {
	case ast.Variable, ast.NullValue:
		return nil // variables are checked with the others; null is the validator's
	case ast.IntValue, ast.FloatValue:
		in = json.Number(v.Raw)
	case ast.StringValue, ast.BlockValue:
		in = v.Raw
	default:
		in = v.Raw // an enum value, a boolean: refused as a %T of string
		if v.Kind == ast.BooleanValue {
			in = v.Raw == "true"
		}
	}
	if err := check(in); err != nil {
		msg := err.Error()
		if ae := apperr.As(err); ae != nil {
			msg = ae.Message
		}
		return &apperr.Error{Code: apperr.BadRequest, Param: arg,
			Message: fmt.Sprintf("argument %s: %s", arg, msg), Err: err}
	}
	return nil
}
