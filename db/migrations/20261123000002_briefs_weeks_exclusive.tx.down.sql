ALTER TABLE briefs DROP CONSTRAINT briefs_weeks_do_not_overlap;
