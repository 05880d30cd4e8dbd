package model

// StoryItem is an item of a story: a *db.Post or a *db.FirehoseMessage.
// The union is bound to an empty interface because its members are the
// store's models, which know nothing of GraphQL.
type StoryItem interface{}
