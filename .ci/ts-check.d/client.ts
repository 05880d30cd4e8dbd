// A small, natural client of feedapi written against the types that
// openapi-typescript generates from the served document, typechecked under
// --strict and run against a live server; every response is validated
// with Ajv (JSON Schema 2020-12, with formats). Run by .ci/ts-check.
import createClient from "openapi-fetch";
import { Ajv2020 } from "ajv/dist/2020.js";
import * as formats from "ajv-formats";
import { buildClientSchema, getIntrospectionQuery, parse, validate, type IntrospectionQuery } from "graphql";
import { readFileSync } from "node:fs";
import type { components, paths } from "./api.js";

const base = process.env.BASE!;
const key = process.env.KEY!;
const internalKey = process.env.INTERNAL_KEY!;

// The document's schemas as one JSON Schema 2020-12 resource.
const doc = JSON.parse(readFileSync("openapi.json", "utf8"));
const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll("#/components/schemas/", "#/$defs/"));
const ajv = new Ajv2020({ allErrors: true });
// ajv-formats is CommonJS: its function is the default export of the namespace.
const addFormats = (formats as unknown as { default: (a: Ajv2020) => Ajv2020 }).default;
addFormats(ajv);
ajv.addFormat("int64", true); // OpenAPI's own formats: the type says it all
ajv.addFormat("double", true);
ajv.addSchema({ $id: "feedapi", $defs: defs });
let checked = 0;
function check(schema: string, body: unknown): void {
  const v = ajv.getSchema(`feedapi#/$defs/${schema}`);
  if (!v) throw new Error(`no schema ${schema}`);
  if (!v(body)) throw new Error(`${schema}: Ajv refuses a real response: ${ajv.errorsText(v.errors)}\n${JSON.stringify(body).slice(0, 400)}`);
  checked++;
}

const api = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });
type Post = components["schemas"]["Post"];
type Tier = components["schemas"]["Tier"];

// readSources reads /v1/sources and checks it against its schema.
async function readSources() {
  const sources = await api.GET("/v1/sources");
  if (sources.error) throw new Error(sources.error.error.message);
  check("SourcesResponse", sources.data);
  return sources.data.data;
}

async function main(): Promise<void> {
  // Walk three pages of posts with their raw payloads.
  const seen: Post[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 3; i++) {
    const { data: page, error } = await api.GET("/v1/posts", { params: { query: { limit: 20, include_raw: true, cursor } } });
    if (error) throw new Error(`posts: ${error.error.code}: ${error.error.message}`);
    check("PostsPage", page);
    for (const p of page.data) {
      const chat = p.raw?.chat; // raw is an object of unknown values
      if (chat === undefined) throw new Error(`post ${p.id} has no raw.chat`);
      seen.push(p);
    }
    const tier: Tier | null = page.meta.tier;
    if (tier !== "free") throw new Error(`tier ${tier}`);
    if (!page.pagination.has_more) break;
    cursor = page.pagination.next_cursor ?? undefined;
  }
  if (seen.length !== 60) throw new Error(`walked ${seen.length} posts, want 60`);

  const one = await api.GET("/v1/posts/{id}", { params: { path: { id: seen[0].id } } });
  if (one.error || one.data.data.id !== seen[0].id) throw new Error("one post");
  check("PostResponse", one.data);

  const briefs = await api.GET("/v1/briefs", { params: { query: { limit: 2 } } });
  if (briefs.error) throw new Error(briefs.error.error.message);
  check("BriefsPage", briefs.data);
  const brief = await api.GET("/v1/briefs/{id}", { params: { path: { id: briefs.data.data[0].id } } });
  if (brief.error) throw new Error(brief.error.error.message);
  check("BriefResponse", brief.data);
  const markdown: string = brief.data.data.content;

  const fire = await api.GET("/v1/firehose", { params: { query: { pane: "crypto", important: true, include_summary: true, limit: 10 } } });
  if (fire.error) throw new Error(fire.error.error.message);
  check("FirehosePage", fire.data);
  for (const m of fire.data.data) if (!m.important || m.pane !== "crypto") throw new Error(`firehose filter: ${m.id}`);

  // Delays cover the last day's arrivals: the seeded data is older, the
  // demo's live rounds are not. The first round is written as the demo
  // starts; a loaded machine may take a while to get to it.
  let delays: NonNullable<Awaited<ReturnType<typeof readSources>>["delays"]> = [];
  for (const deadline = Date.now() + 120_000; delays.length === 0; ) {
    const sources = await readSources();
    if (!sources.firehose_oldest) throw new Error("no firehose_oldest on a seeded database");
    delays = sources.delays ?? [];
    if (delays.length > 0) break;
    if (Date.now() > deadline) throw new Error("no delays in the 120 s after the demo started publishing live data");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const d of delays) if (d.items < 1 || d.p95_ms < d.median_ms) throw new Error(`delay ${JSON.stringify(d)}`);

  // Stories: a page with their first items, one story with all of them
  // (each item pointing back at it), and the firehose collapsed to one
  // message per story, with each message's arrival time.
  const stories = await api.GET("/v1/stories", { params: { query: { limit: 10, items: 2 } } });
  if (stories.error) throw new Error(stories.error.error.message);
  check("StoriesPage", stories.data);
  const told = stories.data.data.find((s) => s.size > 1) ?? stories.data.data[0];
  if (told.items.length > 2) throw new Error(`items=2 gave ${told.items.length} items`);
  const story = await api.GET("/v1/stories/{id}", { params: { path: { id: told.id }, query: { include_body: false } } });
  if (story.error) throw new Error(story.error.error.message);
  check("StoryResponse", story.data);
  for (const item of story.data.data.items) {
    const where = item.type === "Post" ? `post ${item.id}` : `message ${item.id} in ${item.pane}`;
    if (item.story?.uid !== told.uid) throw new Error(`${where} of ${told.uid} names ${JSON.stringify(item.story)}`);
  }
  if (story.data.pagination !== null) throw new Error(`${told.uid} whole has pagination ${JSON.stringify(story.data.pagination)}`);
  // The same story a page of one item at a time, through its cursors.
  const storyPaged: string[] = [];
  let itemCursor: string | undefined;
  for (let pages = 0; ; pages++) {
    if (pages > story.data.data.items.length) throw new Error(`${told.uid}: more pages than items`);
    const page = await api.GET("/v1/stories/{id}", { params: { path: { id: told.id }, query: { include_body: false, limit: 1, cursor: itemCursor } } });
    if (page.error) throw new Error(page.error.error.message);
    check("StoryResponse", page.data);
    storyPaged.push(...page.data.data.items.map((it) => it.uid));
    const p = page.data.pagination;
    if (p === null) throw new Error(`${told.uid} with limit=1 has no pagination`);
    if (!p.has_more || !p.next_cursor) break;
    itemCursor = p.next_cursor;
  }
  const whole = story.data.data.items.map((it) => it.uid);
  if (storyPaged.join() !== whole.join()) throw new Error(`${told.uid} page by page ${storyPaged} differs from whole ${whole}`);
  const collapsed = await api.GET("/v1/firehose", { params: { query: { collapse: "story", limit: 100 } } });
  if (collapsed.error) throw new Error(collapsed.error.error.message);
  check("FirehosePage", collapsed.data);
  const uids = new Set<string>();
  for (const m of collapsed.data.data) {
    const uid = m.story?.uid;
    if (uid !== undefined && uids.has(uid)) throw new Error(`collapse=story gave two messages of ${uid}`);
    if (uid !== undefined) uids.add(uid);
    const late: number | null = m.received_at ? Date.parse(m.received_at) - Date.parse(m.created_at) : null;
    if (late !== null && Number.isNaN(late)) throw new Error(`message ${m.id}: received_at ${m.received_at}`);
  }
  const bogus = await api.GET("/v1/stories", { params: { query: { limit: 1000 } } });
  if (!bogus.error || !bogus.error.error.message.includes("limit")) throw new Error("/v1/stories took limit=1000");
  check("ErrorEnvelope", bogus.error);

  const latest = await api.GET("/v1/etf-flows/latest");
  if (latest.error) throw new Error(latest.error.error.message);
  check("EtfFlowsResponse", latest.data);
  const flows = await api.GET("/v1/etf-flows", { params: { query: { asset: "btc,eth", limit: 30 } } });
  if (flows.error) throw new Error(flows.error.error.message);
  check("EtfFlowsResponse", flows.data);
  for (const flow of flows.data.data) {
    const text = flow.cum_net_inflow.toFixed(2); // a double holds it to the cent
    if (Number(text) !== flow.cum_net_inflow) throw new Error(`cum_net_inflow ${flow.cum_net_inflow} is not exact in cents`);
  }

  // The funds, each fund's figures walked page by page, the paginated
  // flows, and the summary's top funds.
  const funds = await api.GET("/v1/etf-funds", { params: { query: { asset: "btc" } } });
  if (funds.error) throw new Error(funds.error.error.message);
  check("EtfFundsResponse", funds.data);
  const fee: number = funds.data.data[0].fee;
  let figures = 0;
  let fundCursor: string | undefined;
  for (let i = 0; i < 4; i++) {
    const page = await api.GET("/v1/etf-flows/funds", { params: { query: { fund: "ibit,gbtc", limit: 100, cursor: fundCursor } } });
    if (page.error) throw new Error(page.error.error.message);
    check("EtfFundFlowsPage", page.data);
    for (const f of page.data.data) {
      if (f.ticker !== "IBIT" && f.ticker !== "GBTC") throw new Error(`fund filter: ${f.uid}`);
      const coins: number | null = f.holdings;
      if (coins !== null && coins < 0) throw new Error(`holdings ${coins}`);
      figures++;
    }
    if (!page.data.pagination.has_more) break;
    fundCursor = page.data.pagination.next_cursor ?? undefined;
  }
  if (figures !== 400) throw new Error(`walked ${figures} fund figures, want 400`);
  const paged = await api.GET("/v1/etf-flows", { params: { query: { paginate: true, limit: 5 } } });
  if (paged.error || paged.data.pagination === null) throw new Error("paginate=true gave no pagination");
  check("EtfFlowsResponse", paged.data);
  const next = await api.GET("/v1/etf-flows", { params: { query: { limit: 5, cursor: paged.data.pagination.next_cursor ?? undefined } } });
  if (next.error || next.data.data[0].uid === paged.data.data[0].uid) throw new Error("the next page of etf-flows");
  check("EtfFlowsResponse", next.data);
  const complete: boolean | undefined = next.data.data[0].funds_complete;
  if (complete === undefined) throw new Error("no funds_complete");
  const summary = await api.GET("/v1/etf-flows/summary", { params: { query: { asset: "sol" } } });
  if (summary.error || !summary.data.data) throw new Error("summary");
  check("EtfSummaryResponse", summary.data);
  const top = summary.data.data.assets[0].top_funds ?? [];
  if (top.length === 0 || top[0].fund.asset !== "SOL") throw new Error(`top funds ${JSON.stringify(top)}`);
  const unknown = await api.GET("/v1/etf-flows/funds", { params: { query: { fund: "NOPE" } } });
  if (!unknown.error || !unknown.error.error.message.includes("fund")) throw new Error("fund=NOPE was accepted");
  check("ErrorEnvelope", unknown.error);

  const health = await createClient<paths>({ baseUrl: base }).GET("/v1/health");
  if (health.error) throw new Error("health");
  check("HealthResponse", health.data);
  if (health.data.meta.tier !== null) throw new Error("health has a tier");
  // The landing page, as JSON by default, names the places to start (its
  // other media type, the HTML page, is for browsers: a JSON client says so).
  const landing = await createClient<paths, "application/json">({ baseUrl: base }).GET("/");
  if (landing.error) throw new Error("landing page");
  check("LandingResponse", landing.data);
  const reference: string = landing.data.data.links.reference.href;
  if ((await fetch(base + reference, { headers: { Accept: "text/html" } })).status !== 200) throw new Error(`reference ${reference}`);

  // Errors carry their message.
  const bad = await api.GET("/v1/posts", { params: { query: { limit: 500 } } });
  if (!bad.error) throw new Error("limit=500 was accepted");
  check("ErrorEnvelope", bad.error);
  const code: components["schemas"]["Error"]["code"] = bad.error.error.code;
  if (code !== "bad_request" || !bad.error.error.message.includes("limit")) throw new Error(`limit=500: ${bad.error.error.message}`);
  const missing = await api.GET("/v1/posts/{id}", { params: { path: { id: 9007199254740991 } } });
  if (missing.response.status !== 404 || !missing.error) throw new Error("missing post");
  check("ErrorEnvelope", missing.error);

  // GraphQL: graphql-js, with the schema the server introspects, takes an
  // id above 2^31 (Int64, not Int), and the server answers it.
  const gql = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${internalKey}` } });
  const intro = await gql.POST("/graphql", { body: { query: getIntrospectionQuery() } });
  if (intro.error || !intro.data.data) throw new Error("introspection");
  check("GraphQLResponse", intro.data);
  const schema = buildClientSchema(intro.data.data as unknown as IntrospectionQuery);
  const query = "query ($id: Int64!) { post(id: 2147483648) { id } again: post(id: $id) { id source } }";
  const problems = validate(schema, parse(query));
  if (problems.length > 0) throw new Error(`graphql-js refuses ${query}: ${problems.map((p) => p.message).join("; ")}`);
  const run = await gql.POST("/graphql", { body: { query, variables: { id: seen[0].id } } });
  if (run.error || !run.data.data) throw new Error("GraphQL query");
  check("GraphQLResponse", run.data);
  const again = run.data.data.again as { id: number } | null;
  if (again?.id !== seen[0].id) throw new Error(`GraphQL post ${JSON.stringify(run.data)}`);

  console.log(`ts-check: ${checked} responses valid under Ajv 2020-12; ${seen.length} posts walked; brief of ${markdown.length} bytes; ` +
    `${figures} fund figures walked (fees such as ${fee}%); story ${told.uid} of ${story.data.data.items.length} items, the same page by page; ` +
    `${uids.size} stories in a collapsed firehose page; graphql-js takes post(id: 2147483648)`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
