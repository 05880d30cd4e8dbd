package seed

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

var (
	researchTopics = []string{"stablecoin payments", "restaking", "tokenized real-world assets", "onchain prediction markets",
		"MEV on Solana", "zero-knowledge coprocessors", "Bitcoin layer 2s", "intent-based trading", "AI agents with wallets",
		"decentralized perpetual exchanges", "based rollups", "onchain credit", "account abstraction", "cross-chain interoperability"}
	audiences = []string{"builders", "institutions", "rollup teams", "wallet developers", "market makers", "policymakers"}
	angles    = []string{"who is using it and why", "where the fees actually go", "the risks that are still underpriced",
		"what the data says so far", "the open design questions", "how the incentives compare with traditional finance"}
)

// blogPost writes a blog item: title, excerpt, author ("" if unsigned),
// URL, and a summary.
func blogPost(r *rand.Rand, key string, t time.Time) (title, body, author, url, summary string) {
	q, y := quarter(t)
	month := t.Format("January 2006")
	topic := pick(r, researchTopics)
	tok := pick(r, listingTokens)
	if chance(r, 0.6) {
		author = person(r)
	}
	research := func() {
		switch r.IntN(5) {
		case 0:
			title = "The state of " + topic + " in Q" + strconv.Itoa(q) + " " + strconv.Itoa(y)
		case 1:
			title = upperFirst(topic) + ": a primer"
		case 2:
			title = "Why " + topic + " matters for " + pick(r, audiences)
		case 3:
			title = "Notes on " + topic
		default:
			title = "Measuring " + topic + " across " + strconv.Itoa(4+r.IntN(20)) + " chains"
		}
		body = upperFirst(topic) + " moved from experiment to production this year. In this post we look at " + pick(r, angles) +
			", " + pick(r, angles) + ", and what it means for " + pick(r, audiences) + "."
		summary = "A research piece on " + topic + ", covering " + pick(r, angles) + "."
	}
	switch key {
	case "blog:ethereum":
		switch r.IntN(4) {
		case 0:
			n := 40 + int(t.Sub(date(2026, 1, 1)).Hours()/24/14)
			title = "Protocol Update #" + strconv.Itoa(n)
			body = "A roundup of protocol work from the past two weeks: blob throughput, history expiry, the next fork's EIP shortlist and client releases."
			summary = "Ethereum Foundation protocol update #" + strconv.Itoa(n) + ": blobs, history expiry and upcoming fork scope."
		case 1:
			title = "Checkpoint #" + strconv.Itoa(10+int(t.Month())) + ": " + month
			body = "Checkpoint is a series of high-level updates on the Ethereum ecosystem. This edition covers testnet milestones, research priorities and client diversity."
			summary = "The Ethereum Foundation's Checkpoint for " + month + " on testnets, research and clients."
		case 2:
			title = "Ecosystem Support Program allocation update: Q" + strconv.Itoa(q) + " " + strconv.Itoa(y)
			body = "This quarter the Ecosystem Support Program funded " + strconv.Itoa(40+r.IntN(60)) + " projects across zero-knowledge research, client development, education and community events."
			summary = "ESP funded a new round of grants for Q" + strconv.Itoa(q) + "."
		default:
			research()
		}
		url = "https://blog.ethereum.org/" + t.Format("2006/01/02") + "/" + slugify(title, 80)
	case "blog:coinbase", "blog:kraken", "blog:binance":
		venue := map[string]string{"blog:coinbase": "Coinbase", "blog:kraken": "Kraken", "blog:binance": "Binance"}[key]
		switch r.IntN(4) {
		case 0:
			title = tok.name + " (" + tok.sym + ") is now available on " + venue
			body = "Trading for " + tok.sym + " is now live on " + venue + ". Customers can buy, sell, convert, send and receive " + tok.sym + " in supported regions."
			summary = venue + " listed " + tok.sym + "."
		case 1:
			prod := pick(r, products)
			title = "Introducing " + prod
			body = "Today we're launching " + prod + " for eligible customers, with more regions to follow in the coming months."
			summary = venue + " introduced " + prod + "."
		case 2:
			title = venue + " market update: week of " + apDate(mondayOnOrBefore(t))
			body = "Bitcoin and ether traded in a " + pick(r, []string{"narrow", "volatile", "choppy", "steady"}) + " range this week as traders weighed ETF flows and macro data. Here's what we're watching next."
			summary = venue + "'s weekly market commentary."
		default:
			title = "Proof of reserves: " + month + " update"
			body = "Our latest proof-of-reserves snapshot shows customer assets backed at least one-to-one across " + strconv.Itoa(20+r.IntN(20)) + " assets."
			summary = venue + " published its " + month + " proof-of-reserves."
		}
		switch key {
		case "blog:coinbase":
			url = "https://www.coinbase.com/blog/" + slugify(title, 80)
		case "blog:kraken":
			url = "https://blog.kraken.com/news/" + slugify(title, 80)
		default:
			url = "https://www.binance.com/en/blog/markets/" + slugify(title, 60) + "-" + strconv.FormatInt(r.Int64N(9e18), 10)
		}
	case "blog:chainlink":
		switch r.IntN(3) {
		case 0:
			title = "Chainlink Quarterly Review: Q" + strconv.Itoa(q) + " " + strconv.Itoa(y)
			body = "A look back at the quarter: new integrations, Cross-Chain Interoperability Protocol volume, and data streams coverage."
			summary = "Chainlink's Q" + strconv.Itoa(q) + " review."
		case 1:
			bank := pick(r, []string{"Norvik Bank", "Halden Financial", "Keystone Trust"})
			title = bank + " completes tokenized fund settlement pilot with Chainlink"
			body = bank + " settled subscriptions and redemptions of a tokenized fund across two blockchains using Chainlink's interoperability protocol."
			summary = bank + " finished a tokenized fund settlement pilot using Chainlink."
		default:
			research()
		}
		url = "https://blog.chain.link/" + slugify(title, 80) + "/"
	case "blog:solana":
		if chance(r, 0.5) {
			title = "Solana ecosystem report: " + month
			body = "Stablecoin supply, DEX volume and developer activity on Solana over the past month, with highlights from payments and DePIN."
			summary = "Solana's monthly ecosystem report for " + month + "."
		} else {
			research()
		}
		url = "https://solana.com/news/" + slugify(title, 80)
	case "blog:galaxy":
		research()
		url = "https://www.galaxy.com/insights/research/" + slugify(title, 80)
	case "blog:paradigm":
		research()
		url = "https://www.paradigm.xyz/" + t.Format("2006/01") + "/" + slugify(title, 60)
	default: // a16z crypto
		research()
		url = "https://a16zcrypto.com/posts/article/" + slugify(title, 80) + "/"
	}
	if !strings.HasSuffix(body, ".") {
		body += "."
	}
	return title, body, author, url, summary
}
