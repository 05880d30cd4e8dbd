package rest

import "fmt"

// oaStreamPaths documents the SSE endpoints (rest/stream.go).
func oaStreamPaths(p map[string]*oaPathItem) {
	resume := []*oaParameter{
		{Name: "cursor", In: "query", Description: "Resume after this event: the `id` of an event of this stream (the `Last-Event-ID` header, which browsers send when they reconnect, takes precedence). Without it, and without `since`, the stream starts with the items that arrive from now on. An undecodable or foreign position gives 400.",
			Schema: &oaSchema{Type: "string", MinLength: oaPtr[int64](1), MaxLength: oaPtr[int64](256)}},
		{Name: "Last-Event-ID", In: "header", Description: "The `id` of the last event received; the stream resumes after it: first every item missed (from the database), then live items, with no gap and no duplicate, on any replica.",
			Schema: &oaSchema{Type: "string"}},
	}
	const body = "Server-Sent Events. Each item is an event `%s` whose `data` is the item exactly as the list shows it (one line of JSON) and whose `id` is its stream position. Items come in the order they became visible in the database, oldest first, each exactly once, whatever their ids. An item that an import changes is sent again, once, as an event `update` (its `updated_at` set), in order with the new items at the position of the change; resuming with `Last-Event-ID` stays exact. Comment lines (`: heartbeat`) keep idle connections open. The stream ends with an event `error` whose `data` is `{\"error\":{\"code\",\"message\"}}` when the client reads too slowly (`slow_reader`) or the server shuts down (`shutting_down`), after which a client reconnects with `Last-Event-ID` to resume, or when the key is revoked (`unauthorized`, within seconds of the revocation). A client that sends anything after its request, or whose connection stops acknowledging data for three heartbeat intervals, is cut."
	stream := func(event string) *oaResponse {
		return &oaResponse{Description: "The stream.", Headers: oaHeaders(oaLimited...), Content: map[string]oaMediaType{
			"text/event-stream": {Schema: &oaSchema{Type: "string", Description: fmt.Sprintf(body, event)}},
		}}
	}
	errs := func(ok *oaResponse) map[string]*oaResponse {
		return oaWithErrors(map[string]*oaResponse{"200": ok}, "400", "401", "402", "403", "405", "429", "500")
	}
	const limits = " Each stream counts once against the key's rate limit when it opens; the open streams and GraphQL subscriptions of a key together are limited by tier (per replica; over it 429 before the stream starts)."
	p["/v1/posts/stream"] = &oaPathItem{Get: &oaOperation{
		OperationID: "streamPosts", Summary: "Stream new curated posts (SSE)", Tags: []string{oaTagPosts}, Security: oaKeyed(),
		Description: "New curated posts as Server-Sent Events, with the filters of `/v1/posts`; with `since`, first every post created since then." + limits,
		Parameters:  append(oaParams("PostSource", "Since", "Coins", "PostQuery", "IncludeBody", "IncludeRaw"), resume...),
		Responses:   errs(stream("post")),
	}}
	p["/v1/firehose/stream"] = &oaPathItem{Get: &oaOperation{
		OperationID: "streamFirehose", Summary: "Stream new firehose messages (SSE)", Tags: []string{oaTagFeed}, Security: oaKeyed(),
		Description: "New firehose messages as Server-Sent Events, with the filters of `/v1/firehose`; with `since`, first every message created since then." + limits,
		Parameters:  append(oaParams("Pane", "FirehoseSource", "Important", "Since", "Coins", "FirehoseQuery", "IncludeSummary"), resume...),
		Responses:   errs(stream("firehose_message")),
	}}
}
