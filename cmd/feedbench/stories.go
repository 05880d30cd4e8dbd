package main

// storyScenarios are the stories endpoints and collapse=story on the lists
// (group "stories"): opt-in, run with --scenarios stories.
var storyScenarios = []scenario{
	{name: "stories-first", doc: "GET /v1/stories, the first page (20 stories, 3 items each)",
		prepare: static("/v1/stories"), group: "stories", optIn: true},
	{name: "stories-pane", doc: "GET /v1/stories?pane=twitter",
		prepare: static("/v1/stories", "pane", "twitter"), group: "stories", optIn: true},
	{name: "stories-coins", doc: "GET /v1/stories?coins=ETH",
		prepare: static("/v1/stories", "coins", "ETH"), group: "stories", optIn: true},
	{name: "firehose-collapse", doc: "GET /v1/firehose?collapse=story, the first page",
		prepare: static("/v1/firehose", "collapse", "story"), group: "stories", optIn: true},
	{name: "firehose-collapse-pane", doc: "GET /v1/firehose?collapse=story&pane=twitter",
		prepare: static("/v1/firehose", "collapse", "story", "pane", "twitter"), group: "stories", optIn: true},
	{name: "posts-collapse", doc: "GET /v1/posts?collapse=story, the first page",
		prepare: static("/v1/posts", "collapse", "story"), group: "stories", optIn: true},
}
