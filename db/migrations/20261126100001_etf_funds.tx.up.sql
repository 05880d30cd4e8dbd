-- The US spot-ETF funds of each asset. Tickers are compared byte-wise
-- (COLLATE "C") so that SQL orders them as the keyset cursors do.
CREATE TABLE etf_funds (
    ticker      text COLLATE "C" PRIMARY KEY CHECK (ticker ~ '^[A-Z0-9]{1,7}$'),
    asset       etf_asset    NOT NULL,
    issuer      text         NOT NULL,
    name        text         NOT NULL,
    fee         numeric(5, 2) NOT NULL CHECK (fee >= 0),
    launch_date date         NOT NULL,
    exchange    text         NOT NULL
);
CREATE INDEX etf_funds_asset_idx ON etf_funds (asset, ticker);

--bun:split

-- One fund's figures of one day. A fund without a figure for a day has no
-- row (never a zero); net_assets, value_traded and holdings are null where
-- the issuer did not publish them.
CREATE TABLE etf_fund_flows (
    ticker       text COLLATE "C" NOT NULL REFERENCES etf_funds (ticker),
    flow_date    date           NOT NULL,
    net_inflow   numeric(20, 2) NOT NULL,
    net_assets   numeric(20, 2),
    value_traded numeric(20, 2),
    holdings     numeric(18, 8) CHECK (holdings >= 0),
    updated_at   timestamptz    NOT NULL,
    PRIMARY KEY (ticker, flow_date)
);
-- All funds by day, newest first: the per-fund list and a day's sums.
CREATE INDEX etf_fund_flows_date_idx ON etf_fund_flows (flow_date DESC, ticker);
