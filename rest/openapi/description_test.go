package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// The document's introduction says which answers carry a pagination object
// (and that it is null everywhere else), so an endpoint added later has to
// be in it: every path whose 200 answer has a pagination object is named
// in the Envelope paragraph.
func TestTheIntroductionNamesEveryPaginatedPath(t *testing.T) {
	built, err := Build(testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(built, &doc); err != nil {
		t.Fatal(err)
	}
	paragraph := func(title string) string {
		for p := range strings.SplitSeq(doc.Info.Description, "\n\n") {
			if strings.HasPrefix(p, "**"+title+".**") {
				return p
			}
		}
		t.Fatalf("no paragraph %q in the introduction", title)
		return ""
	}
	envelope := paragraph("Envelope")
	type op struct {
		Responses map[string]struct {
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	}
	paginated := 0
	for path, item := range doc.Paths {
		raw, ok := item["get"]
		if !ok {
			continue
		}
		var o op
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ref := o.Responses["200"].Content["application/json"].Schema.Ref
		if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
			var s struct {
				Properties map[string]struct {
					Ref string `json:"$ref"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(doc.Components.Schemas[name], &s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if s.Properties["pagination"].Ref == "#/components/schemas/Pagination" {
				paginated++
				if !strings.Contains(envelope, "`"+path+"`") {
					t.Errorf("%s answers with a pagination object, but the introduction's Envelope paragraph does not name it:\n%s", path, envelope)
				}
			}
		}
	}
	if paginated < 4 {
		t.Fatalf("found %d paginated paths: the walk missed them", paginated)
	}
}
