package db

// Hooks for the external tests that check query plans.

// FirehoseSQL returns the SQL that ListFirehose runs for f, without paging.
func (s *Store) FirehoseSQL(f FirehoseFilter) string {
	var rows []FirehoseMessage
	return s.firehoseQuery(&rows, f).String()
}

// PostsSQL returns the SQL that ListPosts runs for source and p.
func (s *Store) PostsSQL(source string, p Page) string {
	var rows []Post
	return p.apply(s.db.NewSelect().Model(&rows).Where("source = ?", source), "").String()
}

// CuratedSourcesSQL is the statement of CuratedSources.
const CuratedSourcesSQL = curatedSourcesSQL
