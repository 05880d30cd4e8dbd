package db

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Reading only what is shown: a page of posts without raw reads no raw
// (~565 bytes a row), a firehose page without summaries no summary_ai. The
// list statements name their columns instead of "alias.*", and the names
// come from the bun model's fields, minus the ones the caller leaves out
// (PostFilter.Omit, FirehoseFilter.Omit): a column added to the model is
// read without touching the statements.

// columnSets caches the column lists of the list statements, one string
// per model, alias and set of omitted columns (a handful in all).
type columnSets struct {
	m sync.Map // columnKey → string
}

type columnKey struct {
	model reflect.Type
	alias string
	omit  string // the omitted columns, sorted, comma-separated
}

// columns returns the columns of model's table, each qualified by alias
// (none when alias is ""), comma-separated, in the model's field order,
// without those named in omit. An omitted name that is not a column, or a
// primary key, is ignored: the result always holds the primary key.
func (s *Store) columns(model reflect.Type, alias string, omit []string) string {
	key := columnKey{model: model, alias: alias}
	if len(omit) > 0 {
		if len(omit) > 1 && !slices.IsSorted(omit) {
			omit = slices.Sorted(slices.Values(omit))
		}
		key.omit = strings.Join(omit, ",")
	}
	if v, ok := s.cols.m.Load(key); ok {
		return v.(string)
	}
	table := s.db.Table(model)
	var b strings.Builder
	for _, f := range table.Fields {
		if !f.IsPK && slices.Contains(omit, f.Name) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if alias != "" {
			b.WriteString(alias)
			b.WriteByte('.')
		}
		b.WriteString(string(f.SQLName))
	}
	// Columns the database sets and the service only reads (scanonly in
	// the model, so that no write names them) are read too.
	for _, name := range readOnlyFields {
		f, ok := table.FieldMap[name]
		if !ok || slices.Contains(omit, f.Name) {
			continue
		}
		b.WriteString(", ")
		if alias != "" {
			b.WriteString(alias)
			b.WriteByte('.')
		}
		b.WriteString(string(f.SQLName))
	}
	v, _ := s.cols.m.LoadOrStore(key, b.String())
	return v.(string)
}

// readOnlyFields are the scanonly fields of the item models that the list
// and stream statements read.
var readOnlyFields = []string{"received_at", "updated_at"}

var (
	postType     = reflect.TypeFor[Post]()
	firehoseType = reflect.TypeFor[FirehoseMessage]()
	briefType    = reflect.TypeFor[Brief]()
)
