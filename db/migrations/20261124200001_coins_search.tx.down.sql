DROP TRIGGER IF EXISTS firehose_coin_tickers_update ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_coin_tickers_insert ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_tickers_update ON posts;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_tickers_insert ON posts;

--bun:split

DROP FUNCTION IF EXISTS coin_tickers_add();

--bun:split

DROP TABLE IF EXISTS coin_tickers;

--bun:split

DROP INDEX IF EXISTS firehose_fts_idx;

--bun:split

DROP INDEX IF EXISTS posts_fts_idx;

--bun:split

DROP INDEX IF EXISTS firehose_coins_idx;

--bun:split

DROP INDEX IF EXISTS posts_coins_idx;

--bun:split

ALTER TABLE firehose_messages DROP COLUMN IF EXISTS coins;

--bun:split

ALTER TABLE posts DROP COLUMN IF EXISTS coins;
