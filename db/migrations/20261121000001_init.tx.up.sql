-- Initial schema. Types follow the contract: timestamps are timestamptz,
-- calendar days are date, money is numeric exact to the cent, raw payloads jsonb.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

--bun:split

CREATE TABLE posts (
    id                  bigint      PRIMARY KEY CHECK (id > 0),
    source              text        NOT NULL,
    username            text        NOT NULL,
    body                text        NOT NULL,
    url                 text,
    original_source_url text,
    raw                 jsonb       NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(raw) = 'object'),
    created_at          timestamptz NOT NULL
);
-- Posts by source, newest first: WHERE source = $1 ORDER BY id DESC.
CREATE INDEX posts_source_id_idx ON posts (source, id DESC);
-- `since` polling: WHERE created_at >= $1; also Brief.posts and Post.brief.
CREATE INDEX posts_created_at_idx ON posts (created_at, id);

--bun:split

CREATE TABLE briefs (
    id         bigint      PRIMARY KEY CHECK (id > 0),
    week_start date        NOT NULL UNIQUE,
    week_end   date        NOT NULL,
    post_count integer     NOT NULL CHECK (post_count >= 0),
    content    text        NOT NULL,
    created_at timestamptz NOT NULL,
    CHECK (week_end >= week_start)
);

--bun:split

CREATE TABLE firehose_messages (
    id                  bigint      PRIMARY KEY CHECK (id > 0),
    pane                text        NOT NULL CHECK (pane IN ('news', 'crypto', 'wire', 'blogs', 'twitter', 'iansintel')),
    source              text        NOT NULL,
    source_name         text,
    name                text,
    username            text,
    title               text,
    body                text,
    summary_ai          text,
    important           boolean     NOT NULL DEFAULT false,
    url                 text,
    original_source_url text,
    created_at          timestamptz NOT NULL
);
-- By pane, newest first.
CREATE INDEX firehose_pane_id_idx ON firehose_messages (pane, id DESC);
-- Important only, with or without a pane.
CREATE INDEX firehose_important_id_idx ON firehose_messages (id DESC) WHERE important;
CREATE INDEX firehose_important_pane_id_idx ON firehose_messages (pane, id DESC) WHERE important;
-- `since` polling.
CREATE INDEX firehose_created_at_idx ON firehose_messages (created_at, id);
-- Case-insensitive substring on source (ILIKE '%…%').
CREATE INDEX firehose_source_trgm_idx ON firehose_messages USING gin (source gin_trgm_ops);

--bun:split

CREATE TYPE etf_asset AS ENUM ('BTC', 'ETH', 'SOL', 'HYPE');

--bun:split

CREATE TABLE etf_flows (
    asset          etf_asset      NOT NULL,
    flow_date      date           NOT NULL,
    net_inflow     numeric(20, 2) NOT NULL,
    cum_net_inflow numeric(20, 2) NOT NULL,
    net_assets     numeric(20, 2) NOT NULL,
    value_traded   numeric(20, 2) NOT NULL,
    updated_at     timestamptz    NOT NULL,
    PRIMARY KEY (asset, flow_date)
);
-- All assets by day, newest first (enum order gives BTC, ETH, SOL, HYPE).
CREATE INDEX etf_flows_date_asset_idx ON etf_flows (flow_date DESC, asset);

--bun:split

CREATE TABLE api_keys (
    id         bigserial   PRIMARY KEY,
    key_hash   bytea       NOT NULL UNIQUE,
    prefix     text        NOT NULL,
    tier       text        NOT NULL CHECK (tier IN ('free', 'pro', 'internal')),
    name       text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
