// Command codegen runs gqlgen for package graph and then writes the
// executable schema (graph/generated) again from gqlgen's own templates plus
// one addition, plain objects, that makes the common case cheap.
//
// gqlgen resolves every field of every object through graphql.ResolveField:
// a field context, a context value, closures and a boxed result per field,
// and a goroutine per element of a list of objects. For a field that only
// reads a struct field or a method of the Go value, that machinery does
// nothing: there is no resolver to call, no error to place, no middleware
// to run. A plain field is such a field (see plainField for the exact
// rule). When every field a selection asks of an object is plain, the
// generated code answers the object with a small value that writes those
// fields straight from the Go value, and a list of such objects is marshalled
// in one loop instead of one goroutine per element. A nested plain field
// (see nestedField), such as an edge's node, is written by the object's
// plain value too when its own sub-selection is plain, so that
// edges { cursor node { … } } costs what nodes { … } does; the
// sub-selection is collected once per list. Any other selection
// takes gqlgen's path unchanged, so errors, nulls, paths, resolvers,
// dataloaders and @defer behave exactly as before. A plain object reads its
// fields when the response is written, which gqlgen's executor does right
// after resolving the operation; resolvers hand over values nothing changes
// afterwards.
//
// It also lets an in-process caller hand the executor the buffer a query's
// response is written into (WithResponseBuffer in the generated package),
// so that REST's pooled buffers replace one allocation per response.
//
// The templates are gqlgen's, read from the module's copy of gqlgen at
// generation time, with four small patches (see patches): an upgrade of
// gqlgen that moves their anchors fails here, loudly, instead of generating
// something else.
//
// Run from package graph by go generate.
//
// # Upgrading gqlgen
//
// gqlgen is pinned in go.mod (v0.17.95). To move to another version:
//
//  1. go get github.com/99designs/gqlgen@vX.Y.Z (and gqlparser if it asks).
//  2. go test ./graph/internal/codegen: TestPatchesApplyToGqlgen applies
//     every patch to the new templates and parses them. A failure names
//     the template and the anchor that no longer occurs exactly once: read
//     the new template around where the anchor was, and move the anchor
//     (objectAnchor, listAnchor, enumAnchor, responseAnchor, eventAnchor) to the line
//     that does the same thing now: where an object's fields are
//     collected, where a list of objects is marshalled element by element,
//     where an enum input is looked up, where the first response is
//     marshalled into a buffer.
//  3. Check the facts plainField relies on, in codegen.Field and
//     config.TypeReference (IsResolver, Args, HasDirectives, IsBatch,
//     Stream, HasHaser, VOkFunc, IsMethod, MethodHasContext, NoErr,
//     IsVariable, IsSlice, IsPtrToPtr, IsContext, IsMarshaler, IsNilable):
//     a new way for a field to need gqlgen's path (a new kind of
//     directive, a new resolver option) must make plainField false.
//  4. go generate ./graph/ (it rebuilds the graph packages itself), then
//     go test ./graph/... ./rest/...: graph/plain_test.go compares plain
//     objects with gqlgen's own path on the same operations, errors, nulls
//     and @defer included; the goldens of the schema must not change.
//  5. go test ./graph -run 'TestPostTransport|TestWriteJSON': /graphql's
//     POST transport (graph/post.go) copies unexported behaviour of
//     gqlgen's transport.POST (response content type from Accept, status
//     of request errors, messages of undecodable bodies) and writes
//     json.Marshal's bytes without json.Marshal; the test sends the same
//     requests to both transports and fails on any difference in status,
//     content type or body. Bring postTransport in line with the new
//     transport.POST (read its Do, headers.go and util.go).
//  6. go test ./rest -run '^$' -bench 'EndToEnd|Endpoints|GraphQLConnection'
//     -benchmem, to see that the cheap paths are still taken (allocations
//     per request).
//
// No supported gqlgen mechanism replaces the patches at no cost: a field
// middleware (AroundFields) still runs per field inside gqlgen's field
// machinery, after the field context and closures it is meant to avoid
// are made; batch resolvers (IsBatch) replace resolver calls, not the
// marshalling of struct fields, which is what costs here; worker_limit
// bounds the goroutines of a list but still starts them. The generated
// code stays gqlgen's in every other respect.
package main

import (
	"cmp"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"
	"text/template"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"
)

//go:embed plain.gotpl
var plainTemplate string

// Anchors in gqlgen's templates that the patches change.
const (
	objectAnchor = "{{ end }}) graphql.Marshaler {\n" +
		"\tfields := graphql.CollectFields(ec.OperationContext, sel, {{$object.Name|lcFirst}}Implementors)\n"
	listAnchor     = "\t\t\t\t{{- if not $type.IsScalar }}\n"
	enumAnchor     = "\t\t\t\t\t\tres := {{ ($type.EnumUnmarshalVar $.Config.UseFunctionSyntaxForExecutionContext) }}[tmp]\n"
	responseAnchor = "\t\t\tvar buf bytes.Buffer\n" +
		"\t\t\tdata.MarshalGQL(&buf)\n" +
		"\t\t\tresponse.Data = buf.Bytes()\n"
	eventAnchor = "\t\t\tbuf.Reset()\n\t\t\tdata := next(ctx)\n\n\t\t\tif data == nil {\n\t\t\t\treturn nil\n\t\t\t}\n" +
		"\t\t\tdata.MarshalGQL(&buf)\n\n\t\t\treturn &graphql.Response{\n\t\t\t\tData:       buf.Bytes(),\n"
)

// patches change gqlgen's templates: each anchor, which must occur exactly
// once in its file, is replaced.
var patches = []struct{ file, anchor, replacement string }{
	{
		// An object whose selection is all plain fields is answered by its
		// plain value, before gqlgen builds a field set for it.
		file:        "object.gotpl",
		anchor:      objectAnchor,
		replacement: objectAnchor + "{{- template \"plainObjectShortcut\" $object }}\n",
	},
	{
		// A list of objects whose selection is all plain fields is
		// marshalled in one loop.
		file:        "type.gotpl",
		anchor:      listAnchor,
		replacement: listAnchor + "{{- template \"plainListShortcut\" $type }}\n",
	},
	{
		// An enum value with no Go value (another spelling than the
		// schema's) is an error, not the zero value.
		file:   "type.gotpl",
		anchor: enumAnchor,
		replacement: "\t\t\t\t\t\tres, ok := {{ ($type.EnumUnmarshalVar $.Config.UseFunctionSyntaxForExecutionContext) }}[tmp]\n" +
			"\t\t\t\t\t\tif err == nil && !ok {\n" +
			"\t\t\t\t\t\t\terr = unknownEnumValue({{ $type.Definition.Name | quote }}, tmp)\n" +
			"\t\t\t\t\t\t}\n",
	},
	{
		// A query's first response goes into the caller's buffer when it
		// gave one (WithResponseBuffer).
		file:   "internal!.gotpl",
		anchor: responseAnchor,
		replacement: "\t\t\tbuf := responseBuffer(ctx)\n" +
			"\t\t\tdata.MarshalGQL(buf)\n" +
			"\t\t\tresponse.Data = buf.Bytes()\n",
	},
	{
		// Each event of a subscription goes into the caller's buffer when
		// it gave one, so that a subscription holds no buffer of its own
		// between events (the websocket transport renders events for
		// thousands of subscriptions).
		file:   "internal!.gotpl",
		anchor: eventAnchor,
		replacement: "\t\t\tbuf.Reset()\n\t\t\tdata := next(ctx)\n\n\t\t\tif data == nil {\n\t\t\t\treturn nil\n\t\t\t}\n" +
			"\t\t\tout := eventBuffer(ctx, &buf)\n" +
			"\t\t\tdata.MarshalGQL(out)\n\n\t\t\treturn &graphql.Response{\n\t\t\t\tData:       out.Bytes(),\n",
	},
}

func main() {
	appenders := flag.String("appenders", "",
		"import path of the package with the Append functions of gqlgen's built-in scalars")
	flag.Parse()
	if err := run(*appenders); err != nil {
		fmt.Fprintln(os.Stderr, "codegen:", err)
		os.Exit(1)
	}
}

func run(appenders string) error {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		return fmt.Errorf("load gqlgen config: %w", err)
	}
	capture := &captureData{}
	if err := api.Generate(cfg, api.AddPlugin(capture)); err != nil {
		return fmt.Errorf("gqlgen: %w", err)
	}
	if cfg.Exec.Layout != config.ExecLayoutSingleFile || cfg.UseFunctionSyntaxForExecutionContext {
		return errors.New("plain objects need exec.layout single-file and method syntax for the execution context")
	}
	if capture.data == nil {
		return errors.New("gqlgen ran no code generator plugins")
	}
	gqlgen := cfg.Packages.Load("github.com/99designs/gqlgen/codegen")
	if gqlgen == nil || len(gqlgen.GoFiles) == 0 {
		return errors.New("cannot find gqlgen's codegen package")
	}
	tfs, err := execTemplates(filepath.Dir(gqlgen.GoFiles[0]))
	if err != nil {
		return err
	}
	builtins := cfg.Packages.Load(appenders)
	if builtins == nil || builtins.Types == nil || builtins.Types.Scope().Lookup("AppendString") == nil {
		return fmt.Errorf("the appenders package %q has no AppendString", appenders)
	}
	p := newPlanner(capture.data, builtins.Types)
	err = templates.Render(templates.Options{
		PackageName:     cfg.Exec.Package,
		Filename:        cfg.Exec.Filename,
		Data:            capture.data,
		RegionTags:      true,
		GeneratedHeader: true,
		Packages:        cfg.Packages,
		TemplateFS:      tfs,
		PruneOptions:    cfg.GetPruneOptions(),
		Funcs:           p.funcs(),
	})
	if err != nil {
		return fmt.Errorf("render %s: %w", cfg.Exec.Filename, err)
	}
	// gqlgen's own check is off (gqlgen.yml: skip_validation); build what
	// was written here, with the packages that use it.
	build := exec.Command("go", "build", "./...")
	build.Dir = filepath.Dir(filepath.Dir(cfg.Exec.Filename))
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("the executable schema with plain objects does not build: %w", err)
	}
	return nil
}

// captureData is a gqlgen plugin that keeps the data gqlgen generated the
// executable schema from.
type captureData struct{ data *codegen.Data }

func (*captureData) Name() string { return "feedapi-plain-objects" }

func (c *captureData) GenerateCode(data *codegen.Data) error {
	c.data = data
	return nil
}

// execTemplates returns the executable-schema templates of gqlgen's codegen
// package in dir with the patches applied and plain.gotpl added.
func execTemplates(dir string) (fs.FS, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.gotpl"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no templates in %s", dir)
	}
	out := fstest.MapFS{"plain.gotpl": {Data: []byte(plainTemplate)}}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read gqlgen template: %w", err)
		}
		out[filepath.Base(name)] = &fstest.MapFile{Data: b}
	}
	for _, p := range patches {
		f, ok := out[p.file]
		if !ok {
			return nil, fmt.Errorf("gqlgen has no template %s", p.file)
		}
		text := string(f.Data)
		if n := strings.Count(text, p.anchor); n != 1 {
			return nil, fmt.Errorf("%s: the anchor %q occurs %d times, want 1: gqlgen's templates changed", p.file, p.anchor, n)
		}
		f.Data = []byte(strings.Replace(text, p.anchor, p.replacement, 1))
	}
	return out, nil
}

// planner decides which fields and objects are plain and how each plain
// field is written.
type planner struct {
	// builtins holds the Append functions of gqlgen's built-in scalars.
	builtins *types.Package
	// objects maps a GraphQL object name to its plain fields, sorted by
	// name; objects without any are absent.
	objects map[string][]*codegen.Field
	// nested maps a GraphQL object name to its nested plain fields (see
	// nestedField), sorted by name.
	nested map[string][]*codegen.Field
}

func newPlanner(data *codegen.Data, builtins *types.Package) *planner {
	p := &planner{builtins: builtins, objects: map[string][]*codegen.Field{}, nested: map[string][]*codegen.Field{}}
	// A FIELD directive runs around every field; a plain field would skip it.
	if len(data.AllDirectives.LocationDirectives(string(ast.LocationField))) > 0 {
		return p
	}
	for _, o := range data.Objects {
		if o.Root || o.Stream {
			continue
		}
		for _, f := range o.Fields {
			if p.plainField(f) {
				p.objects[o.Name] = append(p.objects[o.Name], f)
			}
		}
		slices.SortFunc(p.objects[o.Name], func(a, b *codegen.Field) int { return cmp.Compare(a.Name, b.Name) })
	}
	// Nested plain fields refer to objects with plain fields, found above;
	// the objects they make plain are not themselves nested (one level).
	references := map[string]types.Type{}
	for _, o := range data.Objects {
		references[o.Name] = o.Reference()
	}
	for _, o := range data.Objects {
		if o.Root || o.Stream {
			continue
		}
		for _, f := range o.Fields {
			if p.nestedField(f, references) {
				p.nested[o.Name] = append(p.nested[o.Name], f)
			}
		}
		slices.SortFunc(p.nested[o.Name], func(a, b *codegen.Field) int { return cmp.Compare(a.Name, b.Name) })
	}
	// One level only: a nested field whose object has nested fields itself
	// is not nested.
	for name, fields := range p.nested {
		p.nested[name] = slices.DeleteFunc(slices.Clone(fields), func(f *codegen.Field) bool {
			return len(p.nested[f.TypeReference.Definition.Name]) > 0
		})
	}
	return p
}

// nestedField reports whether f is a nested plain field: a struct field
// (no resolver, arguments, directives or batching) holding a pointer to an
// object that has plain fields, as that object's plain value takes it. Such
// a field is written by the object's plain value when every field its
// sub-selection asks is plain, which the generated code checks once per
// selection (plainNested) and, for values, once per object. It makes
// edges { cursor node { … } } as cheap as nodes { … }.
func (p *planner) nestedField(f *codegen.Field, references map[string]types.Type) bool {
	t := f.TypeReference
	switch {
	case f.IsResolver, len(f.Args) > 0, f.HasDirectives(), f.IsBatch(), f.Stream, f.HasHaser, f.VOkFunc:
		return false
	case !f.IsVariable() || f.IsMethod():
		return false
	case t.Definition.Kind != ast.Object || t.IsSlice() || t.IsPtrToPtr() || !t.IsPtr() || t.IsMarshaler:
		return false
	case len(p.objects[t.Definition.Name]) == 0:
		return false
	}
	ref, ok := references[t.Definition.Name]
	return ok && types.Identical(ref, t.GO)
}

// plainField reports whether f is read straight from the Go value and
// always written as a value its GraphQL type allows: no resolver,
// arguments, directives or batching; a struct field, or a method that takes
// no context and returns no error; an enum, or a scalar with an Append
// function. A nilable Go value of a non-null field is plain only for a
// struct field, which the generated code checks for nil before it takes the
// plain path.
func (p *planner) plainField(f *codegen.Field) bool {
	t := f.TypeReference
	switch {
	case f.IsResolver, len(f.Args) > 0, f.HasDirectives(), f.IsBatch(), f.Stream, f.HasHaser, f.VOkFunc:
		return false
	case f.IsMethod() && (f.MethodHasContext || !f.NoErr):
		return false
	case !f.IsVariable() && !f.IsMethod():
		return false
	case t.IsSlice():
		return p.plainList(t)
	case t.IsPtrToPtr(), t.IsContext, t.IsMarshaler:
		return false
	case t.GQL.NonNull && t.IsNilable() && f.IsMethod():
		return false
	case t.Definition.Kind == ast.Enum:
		return true
	default:
		return p.appender(f) != nil
	}
}

// plainList reports whether a list field is plain: a list of non-null
// scalars or enums, held as a slice of values, which the generated code
// writes with gqlgen's own marshaller of the list. A nil slice is written
// as [] there, as gqlgen's path writes it, so it needs no nil check.
func (p *planner) plainList(t *config.TypeReference) bool {
	elem := t.Elem()
	if elem == nil || elem.IsSlice() || elem.IsNilable() || !elem.GQL.NonNull {
		return false
	}
	return elem.Definition.Kind == ast.Scalar || elem.Definition.Kind == ast.Enum
}

// appender returns the function that appends f's value as its scalar's
// marshaller writes it, or nil: AppendX next to the scalar's MarshalX, or
// in the builtins package for gqlgen's own marshallers, taking exactly the
// Go type of the value.
func (p *planner) appender(f *codegen.Field) *types.Func {
	t := f.TypeReference
	if t.Definition.Kind != ast.Scalar || t.Marshaler == nil || t.CastType != nil {
		return nil
	}
	value := t.GO
	if t.IsPtr() {
		value = value.(*types.Pointer).Elem()
	}
	name := "Append" + strings.TrimPrefix(t.Marshaler.Name(), "Marshal")
	for _, pkg := range []*types.Package{t.Marshaler.Pkg(), p.builtins} {
		fn, ok := pkg.Scope().Lookup(name).(*types.Func)
		if !ok {
			continue
		}
		sig := fn.Type().(*types.Signature)
		bytes := types.NewSlice(types.Typ[types.Byte])
		if sig.Params().Len() == 2 && sig.Results().Len() == 1 &&
			types.Identical(sig.Params().At(0).Type(), bytes) &&
			types.Identical(sig.Params().At(1).Type(), value) &&
			types.Identical(sig.Results().At(0).Type(), bytes) {
			return fn
		}
	}
	return nil
}

func (p *planner) funcs() template.FuncMap {
	return template.FuncMap{
		// plainObject reports whether the named object has plain fields.
		"plainObject": func(name string) bool { return len(p.objects[name]) > 0 },
		// plainFields lists the plain fields of the named object.
		"plainFields": func(name string) []*codegen.Field { return p.objects[name] },
		// nestedFields lists the nested plain fields of the named object.
		"nestedFields": func(name string) []*codegen.Field { return p.nested[name] },
		// nilChecked lists the plain fields of the named object that the
		// plain path checks for nil.
		"nilChecked": func(name string) []*codegen.Field {
			var out []*codegen.Field
			for _, f := range p.objects[name] {
				if f.TypeReference.GQL.NonNull && f.TypeReference.IsNilable() && !f.TypeReference.IsSlice() {
					out = append(out, f)
				}
			}
			return out
		},
		// marshalled reports whether a plain field of the named object is
		// written by its marshaller, for want of an Append function.
		"marshalled": func(name string) bool {
			return slices.ContainsFunc(p.objects[name], func(f *codegen.Field) bool { return p.appender(f) == nil })
		},
		// appender is the field's Append function, nil for an enum.
		"appender": p.appender,
		// stringAppender appends a field's alias.
		"stringAppender": func() *types.Func {
			return p.builtins.Scope().Lookup("AppendString").(*types.Func)
		},
	}
}
