-- The US spot-ETF funds of each asset. Tickers are compared byte-wise
-- (COLLATE "C") so that SQL orders them as the keyset cursors do.
CREATE TABLE etf_funds (
    ticker      text COLLATE "C" PRIMARY KEY CHECK (ticker ~ '^[A-Z0-9]{1,7}$'),
    asset       etf_asset     NOT NULL,
    issuer      text          NOT NULL,
    name        text          NOT NULL,
    fee         numeric(5, 2) NOT NULL CHECK (fee >= 0),
    launch_date date          NOT NULL,
    exchange    text          NOT NULL,
    -- The target of etf_fund_flows' (ticker, asset).
    UNIQUE (ticker, asset)
);
CREATE INDEX etf_funds_asset_idx ON etf_funds (asset, ticker);

--bun:split

-- One fund's figures of one day. A fund without a figure for a day has no
-- row (never a zero); net_assets, value_traded and holdings are null where
-- the issuer did not publish them. asset is the fund's, set by the trigger
-- below and kept by the foreign key, so that an asset's figures of a day
-- are one range of etf_fund_flows_asset_idx.
CREATE TABLE etf_fund_flows (
    ticker       text COLLATE "C" NOT NULL,
    asset        etf_asset      NOT NULL,
    flow_date    date           NOT NULL,
    net_inflow   numeric(20, 2) NOT NULL,
    net_assets   numeric(20, 2),
    value_traded numeric(20, 2),
    holdings     numeric(18, 8) CHECK (holdings >= 0),
    updated_at   timestamptz    NOT NULL,
    PRIMARY KEY (ticker, flow_date),
    FOREIGN KEY (ticker, asset) REFERENCES etf_funds (ticker, asset) ON UPDATE CASCADE
);
-- All funds by day in list order (newest first, then asset, then ticker).
CREATE INDEX etf_fund_flows_date_idx ON etf_fund_flows (flow_date DESC, asset, ticker);
-- An asset's figures of a day: the sums behind funds_complete.
CREATE INDEX etf_fund_flows_asset_idx ON etf_fund_flows (asset, flow_date);
-- A fund's latest published holdings, whatever the days without them.
CREATE INDEX etf_fund_flows_holdings_idx ON etf_fund_flows (ticker, flow_date) WHERE holdings IS NOT NULL;

--bun:split

CREATE FUNCTION etf_fund_flows_asset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- No fund: asset stays null and NOT NULL refuses the row.
    SELECT f.asset INTO NEW.asset FROM etf_funds f WHERE f.ticker = NEW.ticker;
    RETURN NEW;
END
$$;

--bun:split

CREATE TRIGGER etf_fund_flows_asset BEFORE INSERT OR UPDATE OF ticker ON etf_fund_flows
    FOR EACH ROW EXECUTE FUNCTION etf_fund_flows_asset();
