package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// postTransport answers queries POSTed as application/json: gqlgen's POST
// transport (transport.POST as NewHandler configured it, no extra response
// headers, application/json unless the client asks for
// application/graphql-response+json), added through gqlgen's supported
// extension point (handler.Server.AddTransport), with three costs taken
// out of every request:
//
//   - the response is not passed through json.Marshal: gqlgen's writeJson
//     marshals the whole graphql.Response, and encoding/json validates and
//     re-compacts Data, which the executor has just written (compact but
//     for JSON scalars). A response of data alone (no errors, extensions,
//     label, path or hasNext: every successful query) is written as
//     {"data":…} from Data in one pass (writeCompact), which gives the
//     bytes json.Marshal writes. Any other response still goes through
//     json.Marshal;
//   - the body is not decoded twice: checkBody has decoded it already and
//     hands the parameters over (codedErrors.params);
//   - the executor writes the response into a pooled buffer
//     (WithResponseBuffer) instead of one grown by doubling per request.
//
// The rest (content type from Accept, status of request errors, the
// messages of undecodable bodies) copies unexported code of gqlgen's
// transport package, v0.17.95; TestPostTransportAnswersAsGqlgenDoes
// compares the two transports on the same requests, byte for byte, and
// fails when an upgrade of gqlgen changes what its transport answers.
type postTransport struct {
	bufs *sync.Pool // of *bytes.Buffer
}

var _ graphql.Transport = postTransport{}

func newPostTransport() postTransport {
	return postTransport{bufs: &sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// maxPooledResponse bounds the buffers kept for reuse, so that one large
// response does not pin its memory.
const maxPooledResponse = 1 << 20

func (postTransport) Supports(r *http.Request) bool { return transport.POST{}.Supports(r) }

func (t postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseContentType(r)
	w.Header().Add("Content-Type", contentType)
	start := graphql.Now()

	var params *graphql.RawParams
	if cw, ok := w.(*codedErrors); ok && cw.params != nil {
		params = cw.params
	} else {
		bodyBytes, err := io.ReadAll(r.Body)
		if err != nil {
			gqlErr := gqlerror.Errorf("could not read request body: %+v", err)
			writeJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlErr}))
			return
		}
		params = &graphql.RawParams{}
		dec := json.NewDecoder(bytes.NewReader(bodyBytes))
		dec.UseNumber()
		if err := dec.Decode(params); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			gqlErr := gqlerror.Errorf("json request body could not be decoded: %+v body:%s", err, string(bodyBytes))
			writeJSON(w, exec.DispatchError(ctx, gqlerror.List{gqlErr}))
			return
		}
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if contentType == graphqlResponseJSON {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeJSON(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}

	buf := t.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	responses, ctx := exec.DispatchOperation(WithResponseBuffer(ctx, buf), rc)
	writeJSON(w, responses(ctx))
	if buf.Cap() <= maxPooledResponse {
		t.bufs.Put(buf)
	}
}

const graphqlResponseJSON = "application/graphql-response+json"

// responseContentType is gqlgen's determineResponseContentType for a POST
// transport without ResponseHeaders or UseGrapQLResponseJsonByDefault.
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return "application/json"
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case graphqlResponseJSON:
			return graphqlResponseJSON
		}
	}
	return graphqlResponseJSON
}

// writeJSON writes resp as json.Marshal would, without marshalling a
// response of data alone (see postTransport).
func writeJSON(w io.Writer, resp *graphql.Response) {
	if len(resp.Errors) > 0 || resp.Label != "" || resp.Path != nil || resp.HasNext != nil || len(resp.Extensions) > 0 {
		b, err := json.Marshal(resp)
		if err != nil {
			panic(fmt.Errorf("unable to marshal %s: %w", string(resp.Data), err))
		}
		_, _ = w.Write(b)
		return
	}
	_, _ = io.WriteString(w, `{"data":`)
	if resp.Data == nil {
		_, _ = io.WriteString(w, "null")
	} else {
		writeCompact(w, resp.Data)
	}
	_, _ = io.WriteString(w, "}")
}

// writeCompact writes the JSON data as encoding/json writes a
// json.RawMessage when it escapes HTML, without its validation: whitespace
// between tokens dropped (the executor writes compact JSON, but a JSON
// scalar such as Post.raw is PostgreSQL's text of a jsonb value), and <, >,
// &, U+2028 and U+2029 in strings written as \u escapes (outside strings
// they cannot occur). The executor's data is valid JSON; this is one pass
// over it, where encoding/json's scanner takes several times as long.
func writeCompact(w io.Writer, data []byte) {
	start, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		esc, n := "", 1
		if inString {
			switch {
			case c == '\\':
				i++ // the escaped character is ASCII and needs no escape
				continue
			case c == '"':
				inString = false
				continue
			case c == '<':
				esc = `\u003c`
			case c == '>':
				esc = `\u003e`
			case c == '&':
				esc = `\u0026`
			case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && data[i+2] == 0xA8:
				esc, n = `\u2028`, 3
			case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && data[i+2] == 0xA9:
				esc, n = `\u2029`, 3
			default:
				continue
			}
		} else {
			switch c {
			case '"':
				inString = true
				continue
			case ' ', '\t', '\n', '\r':
			default:
				continue
			}
		}
		if i > start {
			_, _ = w.Write(data[start:i])
		}
		if esc != "" {
			_, _ = io.WriteString(w, esc)
		}
		i += n - 1
		start = i + 1
	}
	_, _ = w.Write(data[start:])
}
