package rest

import "bytes"

// resultRewrites rewrite the data of an endpoint's result, by path, where
// GraphQL cannot give the contract's names itself.
var resultRewrites = map[string]func([]byte) []byte{
	"/v1/stories":      storyItemNames,
	"/v1/stories/{id}": storyItemNames,
}

// storyItemNames gives a post's fields of a story their list names: a
// GraphQL selection of a union cannot name two fields alike whose types
// differ (Post.body is String!, FirehoseMessage.body String), so the
// queries read them under other names. The names are replaced as JSON
// keys only: inside a JSON string a quote is escaped, so "post_body": does
// not occur there, and the items of a story carry no raw payload.
func storyItemNames(data []byte) []byte {
	for _, r := range [][2][]byte{
		{[]byte(`"post_username":`), []byte(`"username":`)},
		{[]byte(`"post_body":`), []byte(`"body":`)},
	} {
		data = bytes.ReplaceAll(data, r[0], r[1])
	}
	return data
}
