package importer

// WithoutStories returns opts for an import that assigns no stories, as an
// import before stories existed did.
func WithoutStories(opts Options) Options {
	opts.noStories = true
	return opts
}
