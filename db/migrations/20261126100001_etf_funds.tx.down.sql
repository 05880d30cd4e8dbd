DROP TABLE IF EXISTS etf_fund_flows;

--bun:split

DROP FUNCTION IF EXISTS etf_fund_flows_asset();

--bun:split

DROP TABLE IF EXISTS etf_funds;
