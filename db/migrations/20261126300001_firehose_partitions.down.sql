-- Firehose partitions are not rolled back by a migration: moving tens of
-- millions of rows back into one table is an operation to plan, not a side
-- effect of a rollback (restore a backup taken before, or copy the rows into
-- a table of the old layout by hand).
DO $$
BEGIN
    RAISE EXCEPTION 'the firehose partitions migration cannot be rolled back';
END
$$;
