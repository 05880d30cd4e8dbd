DROP TABLE IF EXISTS etf_fund_flows;

--bun:split

DROP TABLE IF EXISTS etf_funds;
