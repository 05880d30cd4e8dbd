-- Two briefs whose weeks overlap made Post.brief ambiguous: a post in both
-- weeks belonged to whichever brief a query happened to find first. The
-- weeks (week_end inclusive) of different briefs now never share a day.
-- A plain GiST index over ranges needs no extension.
ALTER TABLE briefs ADD CONSTRAINT briefs_weeks_do_not_overlap
    EXCLUDE USING gist (daterange(week_start, week_end, '[]') WITH &&);
