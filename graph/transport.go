package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
)

// checkBody reads the body of a POST, at most limit bytes, and checks that
// it decodes as gqlgen's POST transport will decode it. Refused bodies get
// a GraphQL error with extensions.code bad_request (413 when too large, 400
// otherwise); without this gqlgen would read a body of any size, and show
// an undecodable one as an internal error, logging it whole. It returns
// the decoded parameters, or nil if the request may not go on; its body is
// restored.
func checkBody(w http.ResponseWriter, r *http.Request, limit int64) *graphql.RawParams {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", limit))
		return nil
	case err != nil:
		refuse(w, http.StatusBadRequest, "the request body could not be read")
		return nil
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		refuse(w, http.StatusBadRequest, "the request body must be a JSON object with a string query, "+
			"and optionally a string operationName and objects variables and extensions")
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return params
}

// refuse answers a request refused before GraphQL sees it.
func refuse(w http.ResponseWriter, status int, message string) {
	writeResponse(w, status, &graphql.Response{Errors: gqlerror.List{{
		Message:    message,
		Extensions: map[string]any{"code": string(apperr.BadRequest)},
	}}})
}

func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		panic(err) // a response of errors always marshals
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// codedErrors holds back error responses (status 400 and up) to give each
// of their errors an extensions.code: gqlgen's transports write a few
// errors past the error presenter ("variables could not be decoded",
// "transport not supported"). Those are the client's fault, bad_request;
// any other error without a code would be internal. Other responses pass
// straight through. params, if set, are the request's parameters as
// checkBody decoded them, for postTransport.
type codedErrors struct {
	http.ResponseWriter
	status int
	held   bytes.Buffer
	params *graphql.RawParams
}

func (c *codedErrors) WriteHeader(code int) {
	if c.status != 0 {
		return
	}
	c.status = code
	if code < http.StatusBadRequest {
		c.ResponseWriter.WriteHeader(code)
	}
}

func (c *codedErrors) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.status >= http.StatusBadRequest {
		return c.held.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// finish writes a held-back error response.
func (c *codedErrors) finish() {
	if c.status < http.StatusBadRequest {
		return
	}
	var resp graphql.Response
	if err := json.Unmarshal(c.held.Bytes(), &resp); err != nil || len(resp.Errors) == 0 {
		resp = graphql.Response{Errors: gqlerror.List{{Message: http.StatusText(c.status)}}}
	}
	code := apperr.BadRequest
	if c.status >= http.StatusInternalServerError {
		code = apperr.Internal
	}
	for _, e := range resp.Errors {
		if _, ok := e.Extensions["code"].(string); !ok {
			if e.Extensions == nil {
				e.Extensions = map[string]any{}
			}
			e.Extensions["code"] = string(code)
		}
	}
	writeResponse(c.ResponseWriter, c.status, &resp)
}
