DROP FUNCTION IF EXISTS story_window_lookup(bigint[], bigint[], int, bigint, bigint[], timestamptz[], timestamptz[], int);
DROP FUNCTION IF EXISTS story_lookup_stored(bigint[], bigint[], int);
DROP TYPE IF EXISTS story_lookup_row;
