// The feedapi dashboard: asks for an internal key, checks it, then reads
// /graphql with it: the ETF panel by queries, the live panel by a
// graphql-transport-ws subscription whose connection_init payload carries
// the key (a browser cannot set headers on a websocket). The key lives only
// in this closure: it is never written to the browser's storage.
(function () {
  "use strict";

  var GRAPHQL = "/graphql";
  var ASSETS = ["BTC", "ETH", "SOL", "HYPE"];
  var LIVE_ROWS = 100;
  var etfEnabled = document.body.getAttribute("data-etf") === "true";
  var key = null;

  var $ = function (id) { return document.getElementById(id); };

  // --- GraphQL over HTTP -------------------------------------------------

  function messageOf(status, body) {
    if (body && body.error && body.error.message) return body.error.message + " (" + status + ")";
    if (body && body.errors && body.errors.length) return body.errors[0].message + " (" + status + ")";
    return "The server answered " + status + ".";
  }

  function gql(query, variables) {
    return fetch(GRAPHQL, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: "Bearer " + key },
      body: JSON.stringify({ query: query, variables: variables || {} })
    }).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (body) {
        if (!response.ok || !body || body.errors) throw new Error(messageOf(response.status, body));
        return body.data;
      });
    });
  }

  function status(text) { $("status").textContent = text || ""; }

  // --- Formats -----------------------------------------------------------

  // Money arrives as JSON numbers with at most two decimals, well within a
  // double's exact range of cents, so toFixed(2) gives back the served text.
  function cents(n) { return n.toFixed(2); }

  function groupDigits(s) { return s.replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  function usdExact(n, signed) {
    var parts = Math.abs(n).toFixed(2).split(".");
    var sign = n < 0 ? "−" : (signed && n > 0 ? "+" : "");
    return sign + "$" + groupDigits(parts[0]) + "." + parts[1];
  }

  function usdShort(n, signed) {
    var a = Math.abs(n), sign = n < 0 ? "−" : (signed && n > 0 ? "+" : "");
    var units = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "K"]];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][0]) return sign + "$" + (a / units[i][0]).toFixed(a >= 100 * units[i][0] ? 0 : 2) + units[i][1];
    }
    return sign + "$" + a.toFixed(0);
  }

  function coins(n, asset) {
    if (n === null || n === undefined) return "—";
    return groupDigits(Math.round(n).toString()) + " " + asset;
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- ETF panel ---------------------------------------------------------

  var SUMMARY = "query EtfSummary($assets: [EtfAsset!]) { etfSummary(assets: $assets) { asOf assets { " +
    "asset latestFlowDate netInflow cumNetInflow netAssets holdings " +
    "last7Days { netInflow days from } last30Days { netInflow days from } " +
    "monthToDate { netInflow days from } yearToDate { netInflow days from } " +
    "streak { direction days since } " +
    "topFunds(first: 10) { fund { ticker issuer name fee } netInflow days netAssets holdings } } } }";
  var HISTORY = "query EtfHistory($assets: [EtfAsset!], $after: String) { etfFlowsConnection(assets: $assets, first: 500, after: $after) { " +
    "nodes { flowDate netInflow cumNetInflow fundsComplete } pageInfo { hasNextPage endCursor } } }";

  var chart = null;
  var current = null; // the asset shown
  var loading = 0;    // generation of the asset load in flight

  function history(asset, after, acc) {
    return gql(HISTORY, { assets: [asset], after: after }).then(function (data) {
      var page = data.etfFlowsConnection;
      acc = acc.concat(page.nodes);
      return page.pageInfo.hasNextPage ? history(asset, page.pageInfo.endCursor, acc) : acc;
    });
  }

  function setCard(name, big, exact, value, note, tone) {
    var card = document.querySelector('[data-card="' + name + '"]');
    card.querySelector(".big").textContent = big;
    var ex = card.querySelector(".exact");
    ex.textContent = exact;
    if (value === null) ex.removeAttribute("data-value"); else ex.setAttribute("data-value", value);
    card.querySelector(".note").textContent = note;
    card.setAttribute("data-tone", tone || "");
  }

  function tone(n) { return n > 0 ? "up" : (n < 0 ? "down" : ""); }

  function periodCard(name, p) {
    if (p.netInflow === null) {
      setCard(name, "—", "no figure in this period", null, "", "");
      return;
    }
    setCard(name, usdShort(p.netInflow, true), usdExact(p.netInflow, true), cents(p.netInflow),
      plural(p.days, "trading day", "trading days") + " from " + p.from, tone(p.netInflow));
  }

  function showSummary(s) {
    $("etf-asof").textContent = "As of " + s.latestFlowDate + " · net assets " + usdShort(s.netAssets) +
      " · cumulative net inflow " + usdShort(s.cumNetInflow, true) +
      (s.holdings !== null ? " · funds hold " + coins(s.holdings, s.asset) : "");
    setCard("latest", usdShort(s.netInflow, true), usdExact(s.netInflow, true), cents(s.netInflow), s.latestFlowDate, tone(s.netInflow));
    periodCard("last7Days", s.last7Days);
    periodCard("last30Days", s.last30Days);
    periodCard("monthToDate", s.monthToDate);
    periodCard("yearToDate", s.yearToDate);
    var st = s.streak;
    var word = { inflow: "of inflows", outflow: "of outflows", none: "without flows" }[st.direction];
    setCard("streak", plural(st.days, "day", "days"), word, String(st.days), "since " + st.since,
      st.direction === "inflow" ? "up" : (st.direction === "outflow" ? "down" : ""));

    var body = $("top-funds").querySelector("tbody");
    body.textContent = "";
    s.topFunds.forEach(function (t) {
      var tr = el("tr");
      tr.setAttribute("data-ticker", t.fund.ticker);
      var fund = el("th");
      fund.scope = "row";
      fund.appendChild(el("span", "ticker", t.fund.ticker));
      fund.appendChild(el("span", "issuer", t.fund.issuer));
      tr.appendChild(fund);
      var flow = el("td", "num " + tone(t.netInflow), usdShort(t.netInflow, true));
      flow.title = usdExact(t.netInflow, true) + " over " + plural(t.days, "day", "days");
      flow.setAttribute("data-value", cents(t.netInflow));
      tr.appendChild(flow);
      tr.appendChild(el("td", "num", t.netAssets === null ? "—" : usdShort(t.netAssets)));
      tr.appendChild(el("td", "num", coins(t.holdings, s.asset)));
      tr.appendChild(el("td", "num", t.fund.fee.toFixed(2) + "%"));
      body.appendChild(tr);
    });
    if (!s.topFunds.length) {
      var tr = el("tr");
      var td = el("td", "muted", "No fund figures in the last 30 trading days.");
      td.colSpan = 5;
      tr.appendChild(td);
      body.appendChild(tr);
    }
  }

  function chartSize() {
    var box = $("chart");
    return { width: Math.max(box.clientWidth, 200), height: window.innerWidth < 600 ? 220 : 320 };
  }

  function axisUSD(u, values) { return values.map(function (v) { return v === null ? "" : usdShort(v); }); }

  function showHistory(rows) {
    rows = rows.slice().reverse(); // oldest first
    var xs = [], up = [], down = [], cum = [], open = [];
    rows.forEach(function (r) {
      xs.push(Date.parse(r.flowDate + "T00:00:00Z") / 1000);
      up.push(r.netInflow >= 0 ? r.netInflow : null);
      down.push(r.netInflow < 0 ? r.netInflow : null);
      cum.push(r.cumNetInflow);
      open.push(r.fundsComplete ? null : r.netInflow);
    });
    var data = [xs, up, down, cum, open];
    $("chart").setAttribute("data-points", String(xs.length));
    if (chart) {
      chart.setData(data);
      return;
    }
    var bars = uPlot.paths.bars({ size: [0.8, 12] });
    var size = chartSize();
    chart = new uPlot({
      width: size.width,
      height: size.height,
      legend: { show: true, live: true },
      cursor: { points: { show: false } },
      scales: { x: { time: true }, flow: { auto: true }, cum: { auto: true } },
      axes: [
        {},
        { scale: "flow", values: axisUSD, size: 64 },
        { scale: "cum", side: 1, values: axisUSD, size: 72, grid: { show: false } }
      ],
      series: [
        {},
        { label: "Inflow", scale: "flow", paths: bars, fill: "#2e9d5b", stroke: "#2e9d5b", points: { show: false }, value: function (u, v) { return v === null ? "—" : usdExact(v, true); } },
        { label: "Outflow", scale: "flow", paths: bars, fill: "#d1453b", stroke: "#d1453b", points: { show: false }, value: function (u, v) { return v === null ? "—" : usdExact(v, true); } },
        { label: "Cumulative", scale: "cum", stroke: "#2f5fb3", width: 2, points: { show: false }, value: function (u, v) { return v === null ? "—" : usdShort(v, true); } },
        { label: "Funds not all in", scale: "flow", stroke: "#8a5a00", fill: "#f0b429", width: 0, paths: function () { return null; }, points: { show: true, size: 7 }, value: function (u, v) { return v === null ? "" : "yes"; } }
      ]
    }, data, $("chart"));
  }

  function loadAsset(asset) {
    var gen = ++loading;
    current = asset;
    Array.prototype.forEach.call($("asset-switcher").children, function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-asset") === asset));
    });
    status("Loading " + asset + "…");
    Promise.all([gql(SUMMARY, { assets: [asset] }), history(asset, null, [])]).then(function (res) {
      if (gen !== loading) return;
      var summary = res[0].etfSummary;
      if (!summary || !summary.assets.length) {
        $("etf-asof").textContent = "No flows for " + asset + ".";
        status("");
        return;
      }
      showSummary(summary.assets[0]);
      showHistory(res[1]);
      document.body.setAttribute("data-etf-asset", asset);
      status("");
    }).catch(function (err) {
      if (gen === loading) status(err.message);
    });
  }

  function startETF() {
    var switcher = $("asset-switcher");
    ASSETS.forEach(function (a) {
      var b = el("button", "asset", a);
      b.type = "button";
      b.setAttribute("data-asset", a);
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", function () { if (a !== current) loadAsset(a); });
      switcher.appendChild(b);
    });
    window.addEventListener("resize", function () {
      if (chart) chart.setSize(chartSize());
    });
    loadAsset(ASSETS[0]);
  }

  // --- Live panel --------------------------------------------------------

  var POST_FIELDS = "uid id source username body url originalSourceUrl createdAt coins story { id }";
  var FIREHOSE_FIELDS = "uid id pane source sourceName title body url originalSourceUrl createdAt coins important story { id }";
  // The newest items with the filters, then the subscription with the same
  // filters: the server filters both alike (coins, full-text q, pane).
  var LIST = {
    posts: "query LivePosts($coins: [String!], $q: String) { items: posts(first: 30, coins: $coins, q: $q) { nodes { " + POST_FIELDS + " } } }",
    firehose: "query LiveFirehose($pane: Pane, $coins: [String!], $q: String) { items: firehose(first: 30, pane: $pane, coins: $coins, q: $q) { nodes { " + FIREHOSE_FIELDS + " } } }"
  };
  var SUBSCRIBE = {
    posts: "subscription LivePost($coins: [String!], $q: String) { item: postAdded(coins: $coins, q: $q) { " + POST_FIELDS + " } }",
    firehose: "subscription LiveFirehose($pane: Pane, $coins: [String!], $q: String) { item: firehoseMessageAdded(pane: $pane, coins: $coins, q: $q) { " + FIREHOSE_FIELDS + " } }"
  };

  var ws = null;
  var live = null; // the current filters, items and subscriptions

  // storyOf is the key of an item's story (the same event told by several
  // items, posts and firehose messages alike): the live list collapses a
  // story's items into one row that counts them. Items stored before
  // stories were kept have none and stay rows of their own.
  function storyOf(item) {
    return item.story ? "story:" + item.story.id : null;
  }

  function filters() {
    var coinsText = $("live-coins").value.trim();
    var q = $("live-q").value.trim();
    var pane = $("live-pane").value;
    return {
      coins: coinsText ? coinsText.split(",").map(function (c) { return c.trim().toUpperCase(); }).filter(Boolean) : null,
      q: q || null,
      pane: pane,
      kinds: pane === "posts" ? ["posts"] : (pane === "" ? ["posts", "firehose"] : ["firehose"]),
      firehosePane: ["", "posts", "firehose"].indexOf(pane) >= 0 ? null : pane
    };
  }

  function filterVars(kind, f) {
    var vars = { coins: f.coins, q: f.q };
    if (kind === "firehose") vars.pane = f.firehosePane;
    return vars;
  }

  function renderRow(entry) {
    var item = entry.item;
    var li = el("li", "item " + entry.kind);
    li.setAttribute("data-uid", item.uid);
    li.setAttribute("data-received", String(entry.received));
    var meta = el("div", "meta");
    meta.appendChild(el("time", "", item.createdAt.slice(11, 19) + " UTC"));
    meta.appendChild(el("span", "badge " + entry.kind, entry.kind === "posts" ? item.source : item.pane));
    if (entry.kind === "firehose" && item.sourceName) meta.appendChild(el("span", "src", item.sourceName));
    if (item.important) meta.appendChild(el("span", "badge important", "important"));
    if (entry.count > 1) meta.appendChild(el("span", "badge story", "+" + (entry.count - 1) + " more"));
    li.appendChild(meta);
    var text = item.title || item.body || "";
    var p = el("p", "text", text.length > 280 ? text.slice(0, 279) + "…" : text);
    li.appendChild(p);
    var foot = el("div", "foot");
    item.coins.forEach(function (c) { foot.appendChild(el("span", "coin", c)); });
    var link = item.originalSourceUrl || item.url;
    if (link && /^https?:\/\//i.test(link)) {
      var a = el("a", "", "source");
      a.href = link;
      a.rel = "noopener noreferrer";
      a.target = "_blank";
      foot.appendChild(a);
    }
    li.appendChild(foot);
    return li;
  }

  function render() {
    var list = $("live-list");
    var rows = live.rows.slice().sort(function (x, y) {
      return x.item.createdAt < y.item.createdAt ? 1 : (x.item.createdAt > y.item.createdAt ? -1 : 0);
    }).slice(0, LIVE_ROWS);
    list.textContent = "";
    if (!rows.length) list.appendChild(el("li", "muted", "Nothing yet for these filters."));
    rows.forEach(function (r) { list.appendChild(renderRow(r)); });
  }

  function add(state, kind, items) {
    if (state !== live) return;
    var now = Date.now();
    items.forEach(function (item) {
      if (state.seen[item.uid]) return;
      state.seen[item.uid] = true;
      var story = storyOf(item);
      var existing = story && state.rows.filter(function (r) { return r.story === story; })[0];
      if (existing) {
        existing.count++;
        if (item.createdAt > existing.item.createdAt) { existing.item = item; existing.received = now; }
        return;
      }
      state.rows.push({ kind: kind, item: item, story: story, count: 1, received: now });
    });
    render();
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    ws = graphqlWs.createClient({
      url: scheme + "//" + window.location.host + GRAPHQL,
      connectionParams: { Authorization: "Bearer " + key },
      lazy: false,
      keepAlive: 15000,
      retryAttempts: Infinity,
      shouldRetry: function () { return true; },
      on: {
        connected: function () { $("live-state").textContent = "live"; $("live-state").setAttribute("data-state", "live"); },
        closed: function () { $("live-state").textContent = "reconnecting"; $("live-state").setAttribute("data-state", "down"); }
      }
    });
  }

  function applyFilters() {
    if (live) live.stop.forEach(function (stop) { stop(); });
    var state = { f: filters(), rows: [], seen: {}, stop: [] };
    live = state;
    render();
    state.f.kinds.forEach(function (kind) {
      state.stop.push(ws.subscribe({ query: SUBSCRIBE[kind], variables: filterVars(kind, state.f) }, {
        next: function (msg) {
          if (msg.errors || !msg.data) { status(msg.errors ? msg.errors[0].message : "The subscription ended."); return; }
          add(state, kind, [msg.data.item]);
        },
        error: function (err) {
          if (state !== live) return;
          status(err && err.message ? err.message : "The live connection failed; it reconnects by itself.");
        },
        complete: function () {}
      }));
      gql(LIST[kind], filterVars(kind, state.f)).then(function (data) {
        add(state, kind, data.items.nodes);
      }).catch(function (err) { if (state === live) status(err.message); });
    });
  }

  function startLive() {
    connect();
    $("live-filters").addEventListener("submit", function (event) {
      event.preventDefault();
      applyFilters();
    });
    applyFilters();
  }

  // --- Key step ----------------------------------------------------------

  $("key-form").addEventListener("submit", function (event) {
    event.preventDefault();
    key = $("key").value.trim();
    $("key-error").textContent = "Checking the key…";
    gql("{ __typename }").then(function () {
      $("key").value = "";
      $("key-error").textContent = "";
      $("key-step").hidden = true;
      $("dashboard").hidden = false;
      if (etfEnabled) startETF();
      startLive();
    }).catch(function (err) {
      key = null;
      $("key-error").textContent = err.message;
    });
  });
})();
