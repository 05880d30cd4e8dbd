package graph

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// validationRules are gqlparser's default rules, with the errors of
// ValuesOfCorrectType (a literal the argument's type does not take, such as
// an unknown enum value) naming the argument in extensions.param, as the
// refusal of a variable names the variable.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	inner := rules.ValuesOfCorrectTypeRule
	r.RemoveRule(inner.Name)
	r.AddRule(inner.Name, func(observers *core.Events, addError core.AddErrFunc) {
		// Registered before the rule's own, so that the document is known
		// when the rule reports the value.
		var doc *ast.QueryDocument
		observers.OnValue(func(w *core.Walker, _ *ast.Value) { doc = w.Document })
		inner.RuleFunc(observers, func(options ...core.ErrorOption) {
			var probe gqlerror.Error
			for _, o := range options {
				o(&probe)
			}
			if len(probe.Locations) > 0 {
				if arg := argumentAt(doc, probe.Locations[0]); arg != "" {
					options = append(options, func(err *gqlerror.Error) {
						if err.Extensions == nil {
							err.Extensions = map[string]any{}
						}
						err.Extensions["param"] = arg
					})
				}
			}
			addError(options...)
		})
	})
	return r
}

// argumentAt returns the name of the field argument of doc whose value
// holds a value at loc, or "".
func argumentAt(doc *ast.QueryDocument, loc gqlerror.Location) string {
	if doc == nil {
		return ""
	}
	var inValue func(v *ast.Value) bool
	inValue = func(v *ast.Value) bool {
		if v == nil {
			return false
		}
		if v.Position != nil && v.Position.Line == loc.Line && v.Position.Column == loc.Column {
			return true
		}
		for _, c := range v.Children {
			if inValue(c.Value) {
				return true
			}
		}
		return false
	}
	var inSet func(ast.SelectionSet) string
	inSet = func(set ast.SelectionSet) string {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					if inValue(a.Value) {
						return a.Name
					}
				}
				if name := inSet(s.SelectionSet); name != "" {
					return name
				}
			case *ast.InlineFragment:
				if name := inSet(s.SelectionSet); name != "" {
					return name
				}
			}
		}
		return ""
	}
	for _, op := range doc.Operations {
		if name := inSet(op.SelectionSet); name != "" {
			return name
		}
	}
	for _, f := range doc.Fragments {
		if name := inSet(f.SelectionSet); name != "" {
			return name
		}
	}
	return ""
}
