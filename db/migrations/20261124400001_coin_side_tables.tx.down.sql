CREATE INDEX IF NOT EXISTS firehose_coins_idx ON firehose_messages USING gin (coins);

--bun:split

CREATE INDEX IF NOT EXISTS posts_coins_idx ON posts USING gin (coins);

--bun:split

DROP TRIGGER IF EXISTS firehose_coin_side_truncate ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_coin_side_delete ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_coin_side_update ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS firehose_coin_side_insert ON firehose_messages;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_side_truncate ON posts;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_side_delete ON posts;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_side_update ON posts;

--bun:split

DROP TRIGGER IF EXISTS posts_coin_side_insert ON posts;

--bun:split

DROP FUNCTION IF EXISTS coin_side_truncate();

--bun:split

DROP FUNCTION IF EXISTS coin_side_delete();

--bun:split

DROP FUNCTION IF EXISTS coin_side_update();

--bun:split

DROP FUNCTION IF EXISTS coin_side_insert();

--bun:split

DROP TABLE IF EXISTS firehose_coins;

--bun:split

DROP TABLE IF EXISTS post_coins;
