package rest

// oaPolled adds X-Poll-Interval to the 200 and 304 answers of a polled
// list (posts, firehose); its 304 is described in place, as the shared one
// has no such header.
func oaPolled(rs map[string]*oaResponse) map[string]*oaResponse {
	if ok := rs["200"]; ok != nil {
		ok.Headers[hPollInterval] = &oaHeader{Ref: "#/components/headers/" + hPollInterval}
	}
	h := oaHeaders(append([]string{"ETag", hPollInterval}, oaLimited...)...)
	rs["304"] = &oaResponse{
		Description: "The `If-None-Match` tag matches the current representation: no body. Does not count against the key's rate limit (`RateLimit-Remaining` is unchanged).",
		Headers:     h,
	}
	return rs
}

// oaPollIntervalHeader is the component header X-Poll-Interval.
func oaPollIntervalHeader() *oaHeader {
	lo := int64(minPollInterval)
	return &oaHeader{
		Description: "Hint: seconds a poller should wait before asking for this list again. The first page (no `cursor`) of each parameter set " +
			"may be answered from a short-lived in-process cache: a write shows within this many seconds at most (sooner when the server " +
			"learns of it); polling faster gains nothing, and a 304 for an unchanged page costs no rate limit.",
		Schema: &oaSchema{Type: "integer", Minimum: &lo},
	}
}
