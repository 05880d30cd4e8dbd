package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// kin-openapi's openapi3filter is the request and response validator of
// many Go services; the document must suit it as well as libopenapi's.

// kinRouters caches the router of each document content.
var kinRouters sync.Map // string(doc) → *kinEntry

type kinEntry struct {
	once   sync.Once
	router routers.Router
	err    error
}

// kinRouter loads doc with kin-openapi, validates it and returns its router,
// matching paths on any host (the servers are left out).
func kinRouter(doc []byte) (routers.Router, error) {
	v, _ := kinRouters.LoadOrStore(string(doc), &kinEntry{})
	e := v.(*kinEntry)
	e.once.Do(func() {
		d, err := openapi3.NewLoader().LoadFromData(doc)
		if err != nil {
			e.err = fmt.Errorf("kin-openapi: load: %w", err)
			return
		}
		if err := d.Validate(context.Background()); err != nil {
			e.err = fmt.Errorf("kin-openapi: validate the document: %w", err)
			return
		}
		d.Servers = nil
		e.router, e.err = gorillamux.NewRouter(d)
	})
	return e.router, e.err
}

// kinCheck validates one exchange with openapi3filter: the request (only
// when the server accepted it) and the response, body included.
func kinCheck(doc []byte, req *http.Request, status int, header http.Header, body []byte) error {
	r, err := kinRouter(doc)
	if err != nil {
		return err
	}
	route, params, err := r.FindRoute(req)
	if errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed {
		return nil // no operation to check against; check() covers the router's answers
	}
	if err != nil {
		return fmt.Errorf("kin-openapi: no route for %s %s: %w", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if status/100 == 2 || status == http.StatusNotModified {
		if err := openapi3filter.ValidateRequest(req.Context(), in); err != nil {
			return fmt.Errorf("kin-openapi: the accepted request %s %s: %w", req.Method, req.URL.RequestURI(), err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: status, Header: header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		return fmt.Errorf("kin-openapi: the response %d to %s %s: %w", status, req.Method, req.URL.RequestURI(), err)
	}
	return nil
}

// TestKinOpenAPILoadsTheDocument: kin-openapi reads and validates the
// document of both deployments.
func TestKinOpenAPILoadsTheDocument(t *testing.T) {
	for _, etf := range []bool{true, false} {
		o := openAPITestOptions
		o.ETFEnabled = etf
		if _, err := kinRouter(testDoc(t, o)); err != nil {
			t.Errorf("etf=%v: %v", etf, err)
		}
	}
}

// The check has teeth: a response that breaks its schema is refused.
func TestKinCheckCatchesABadResponse(t *testing.T) {
	doc := testDoc(t, openAPITestOptions)
	req, _ := http.NewRequest(http.MethodGet, "http://x/v1/etf-flows/latest", nil)
	h := http.Header{"Content-Type": {contractContentType}}
	if err := kinCheck(doc, req, 200, h, []byte(`{"data":[{"asset":"XRP"}],"pagination":null}`)); err == nil {
		t.Error("kin-openapi accepted an ETF answer with an unknown asset and no meta")
	}
	req, _ = http.NewRequest(http.MethodGet, "http://x/v1/posts?since=yesterday", nil)
	if err := kinCheck(doc, req, 200, h, []byte(`{}`)); err == nil {
		t.Error("kin-openapi accepted since=yesterday")
	}
}
