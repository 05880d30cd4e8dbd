package graph

import (
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// etfFields names the fields that exist only where ETF flows are offered.
var etfFields = map[string][]string{
	"Query":   {"etfFlows", "etfFlowsLatest", "etfSummary", "etfFlowsConnection", "etfFunds", "etfFundFlows"},
	"Sources": {"etfAssets", "etfFunds"},
}

// etfTypes are reachable only through etfFields.
var etfTypes = []string{"EtfFlow", "EtfAsset", "EtfSummary", "EtfSummaryEntry", "EtfPeriod", "EtfStreak", "EtfStreakDirection",
	"EtfFund", "EtfFundFlow", "EtfTopFund", "EtfFlowConnection", "EtfFlowEdge", "EtfFundFlowConnection", "EtfFundFlowEdge",
	"Percent", "CoinAmount"}

// withoutETF returns a copy of s without the ETF fields and types. s itself
// (gqlgen's shared parsed schema) is left untouched: only the maps and the
// definitions that change are copied.
func withoutETF(s *ast.Schema) *ast.Schema {
	out := *s
	out.Types = make(map[string]*ast.Definition, len(s.Types))
	for name, def := range s.Types {
		if slices.Contains(etfTypes, name) {
			continue
		}
		if drop, ok := etfFields[name]; ok {
			d := *def
			d.Fields = slices.DeleteFunc(slices.Clone(def.Fields), func(f *ast.FieldDefinition) bool {
				return slices.Contains(drop, f.Name)
			})
			def = &d
		}
		out.Types[name] = def
	}
	out.Query = out.Types[s.Query.Name]
	out.PossibleTypes = make(map[string][]*ast.Definition, len(s.PossibleTypes))
	for name, defs := range s.PossibleTypes {
		if slices.Contains(etfTypes, name) {
			continue
		}
		out.PossibleTypes[name] = remap(defs, out.Types)
	}
	out.Implements = make(map[string][]*ast.Definition, len(s.Implements))
	for name, defs := range s.Implements {
		if slices.Contains(etfTypes, name) {
			continue
		}
		out.Implements[name] = remap(defs, out.Types)
	}
	return &out
}

// remap points defs at their (possibly copied) definitions in types.
func remap(defs []*ast.Definition, types map[string]*ast.Definition) []*ast.Definition {
	out := make([]*ast.Definition, 0, len(defs))
	for _, d := range defs {
		if nd, ok := types[d.Name]; ok {
			out = append(out, nd)
		}
	}
	return out
}
