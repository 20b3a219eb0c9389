// Opens an HTML export in headless chromium (puppeteer-core, the system's browser) and prints
// what a reader sees, as one JSON document; tests/export_browser.rs compares it with the
// session. Every request the page makes is intercepted: the page itself (and data: URLs,
// which never leave it) go through, anything else is counted and aborted.
//
//   node check-export.mjs CHROMIUM FILE.html SPEC.json
//
// SPEC: {
//   "click": ID?,        click this tree node, then report the conversation's entries
//   "hash": ID?,         open FILE.html#leaf=ID in a fresh page and report the same
//   "search": TEXT?,     type TEXT in the search box, report the results' entry ids
//   "texts": {ID: TEXT}, entries whose rendered text must contain TEXT (checked after
//                        scrolling each into view)
//   "reach": [ID],       set #leaf=ID for each in turn: each must be shown as the target
//   "reachSearch": {ID: TEXT}, search TEXT for each in turn: ID must be among the results
//   "tree": bool         scroll the whole (virtual) tree and report every row's entry id
//                        (default true)
//   "timing": bool       report how long the page took to first show the conversation
// }
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

const [chromium, file, specFile] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specFile, "utf8"));
const pageUrl = pathToFileURL(file).href;

const report = {
  external: [],
  dialogs: [],
  errors: [],
  pwned: null,
};

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  protocolTimeout: 1800000,
});

async function open(url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const target = request.url();
    if (target.split("#")[0] === pageUrl || target.startsWith("data:")) {
      request.continue();
    } else {
      report.external.push(target);
      request.abort();
    }
  });
  page.on("dialog", async (dialog) => {
    report.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  page.on("pageerror", (error) => report.errors.push(String(error)));
  // Anything the Content-Security-Policy blocked: the page must never try.
  await page.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      window.__violations.push(event.violatedDirective + " " + event.blockedURI);
    });
  });
  page.on("console", (message) => {
    if (message.type() === "error") report.errors.push(message.text());
  });
  const started = Date.now();
  await page.goto(url, { waitUntil: "load", timeout: 120000 });
  await page.waitForSelector("html[data-ready=true]", { timeout: 120000 });
  // The first entry's body on screen: the page has rendered what a reader first sees.
  await page.waitForFunction(() => document.querySelector("#conversation .entry.filled, #conversation .empty"), {
    timeout: 120000,
  });
  const elapsed = Date.now() - started;
  return { page, elapsed };
}

// The entries of the path shown, every page of a long one asked for first (as a reader would).
const conversationIds = (page) =>
  page.evaluate(async () => {
    for (let more; (more = document.querySelector("#conversation .load-earlier:not([hidden])")); ) {
      more.click();
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
    return [...document.querySelectorAll("#conversation article[data-entry-id]")].map((n) => n.getAttribute("data-entry-id"));
  });

// The search's results, every page of them asked for (until `until` is among them).
const allResults = (page, until) =>
  page.evaluate(async (until) => {
    const ids = () => [...document.querySelectorAll("#results .result")].map((n) => n.getAttribute("data-entry-id"));
    for (let more; !ids().includes(until) && (more = document.querySelector("#results .more-results")); ) {
      const before = ids().length;
      more.click();
      while (ids().length === before) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return ids();
  }, until);

async function pwned(page) {
  return page.evaluate(() => window.__pwned ?? null);
}

const { page, elapsed } = await open(pageUrl);
if (spec.timing) report.firstRenderMs = elapsed;
// The tree is virtual: only the rows on screen exist. Its rows are read screen by screen.
report.treeRows = await page.$eval("#tree-head", (n) => Number(n.getAttribute("data-rows")));
report.treeHead = await page.$eval("#tree-head", (n) => n.textContent);
const readTree = () =>
  page.evaluate(async () => {
    const tree = document.getElementById("tree");
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const rows = new Map();
    const active = new Set();
    let most = 0;
    tree.scrollTop = 0;
    for (let step = 0; step < 1e7; step++) {
      await frame();
      await frame();
      const nodes = [...tree.querySelectorAll(".node")];
      most = Math.max(most, nodes.length);
      for (const n of nodes) {
        rows.set(Number(n.getAttribute("data-row")), n.getAttribute("data-entry-id"));
        if (n.classList.contains("active")) active.add(n.getAttribute("data-entry-id"));
      }
      const before = tree.scrollTop;
      tree.scrollTop = before + tree.clientHeight;
      if (tree.scrollTop === before) break;
    }
    tree.scrollTop = 0;
    const ordered = [...rows.keys()].sort((a, b) => a - b).map((r) => rows.get(r));
    return { ids: ordered, active: [...active], mostNodes: most, screenRows: Math.ceil(tree.clientHeight / 24) };
  });
report.treeNodesAtOpen = await page.$$eval("#tree .node", (nodes) => nodes.length);
if (spec.tree !== false) {
  const tree = await readTree();
  report.treeIds = tree.ids;
  report.activeIds = tree.active;
  report.treeMostNodes = tree.mostNodes;
  report.treeScreenRows = tree.screenRows;
}
report.pathIds = await conversationIds(page);
report.title = await page.$eval("#title", (node) => node.textContent);

// Every entry named in `texts`: the conversation is read screen by screen from the top, as a
// reader scrolls; each entry must come on screen rendered and holding its text.
report.missingText = [];
report.invisible = [];
if (spec.texts) {
  const seen = await page.evaluate(async () => {
    const main = document.getElementById("main");
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const squash = (s) => s.replace(/\s+/g, " ");
    const found = {};
    // A long path is shown in pages: every earlier page asked for first, as a reader would.
    for (let more; (more = document.querySelector("#conversation .load-earlier:not([hidden])")); ) {
      more.click();
      await frame();
    }
    main.scrollTop = 0;
    for (let step = 0; step < 100000; step++) {
      // What is on screen, once the page has rendered it (a few frames at most).
      let onScreen = [];
      for (let wait = 0; wait < 60; wait++) {
        await frame();
        onScreen = [...document.querySelectorAll("#conversation article[data-entry-id]")].filter((article) => {
          const box = article.getBoundingClientRect();
          return box.height > 0 && box.bottom > 0 && box.top < window.innerHeight;
        });
        if (onScreen.every((article) => article.classList.contains("filled"))) break;
      }
      for (const article of onScreen) {
        if (article.classList.contains("filled")) {
          found[article.getAttribute("data-entry-id")] = squash(article.textContent);
        }
      }
      const before = main.scrollTop;
      main.scrollTop = before + main.clientHeight * 0.8;
      if (main.scrollTop === before) break;
    }
    return found;
  });
  const squash = (s) => s.replace(/\s+/g, " ");
  for (const [id, text] of Object.entries(spec.texts)) {
    if (!(id in seen)) report.invisible.push(id);
    else if (!seen[id].includes(squash(text))) report.missingText.push({ id, text, shown: seen[id].slice(0, 300) });
  }
}

if (spec.click) {
  // Scrolled to, screen by screen, as a reader would, then clicked.
  const node = await page.evaluateHandle(async (id) => {
    const tree = document.getElementById("tree");
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    tree.scrollTop = 0;
    for (;;) {
      await frame();
      await frame();
      const node = [...tree.querySelectorAll(".node")].find((n) => n.getAttribute("data-entry-id") === id);
      if (node) {
        node.scrollIntoView({ block: "center" });
        await frame();
        await frame();
        return [...tree.querySelectorAll(".node")].find((n) => n.getAttribute("data-entry-id") === id);
      }
      const before = tree.scrollTop;
      tree.scrollTop = before + tree.clientHeight;
      if (tree.scrollTop === before) return null;
    }
  }, spec.click);
  await node.click();
  await page.waitForFunction((id) => document.getElementById("conversation").getAttribute("data-shown") === id, { timeout: 60000 }, spec.click);
  report.clickedPathIds = await conversationIds(page);
  report.clickedHash = await page.evaluate(() => location.hash);
  report.clickedSelected = await page.$eval("#tree .node.selected", (n) => n.getAttribute("data-entry-id"));
}

if (spec.search) {
  await page.type("#search", spec.search);
  await page.waitForFunction((q) => document.getElementById("search-status").getAttribute("data-done") === q.trim().toLowerCase(), { timeout: 120000 }, spec.search);
  report.searchIds = await allResults(page, null);
  report.searchStatus = await page.$eval("#search-status", (n) => n.textContent);
}

// #leaf=ID for every entry named: each becomes the shown target, its text rendered.
if (spec.reach) {
  report.unreached = await page.evaluate(async (wanted) => {
    const conversation = document.getElementById("conversation");
    const failed = [];
    for (const id of wanted) {
      location.hash = "#leaf=" + encodeURIComponent(id);
      const started = Date.now();
      while (conversation.getAttribute("data-shown") !== id && Date.now() - started < 30000) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const target = conversation.querySelector(".entry.target");
      if (!target || target.getAttribute("data-entry-id") !== id || !target.classList.contains("filled")) failed.push(id);
    }
    return failed;
  }, spec.reach);
}

// A search for each entry's text: the entry is among the results (every page of them).
if (spec.reachSearch) {
  report.unfound = [];
  for (const [id, text] of Object.entries(spec.reachSearch)) {
    await page.evaluate((text) => {
      const input = document.getElementById("search");
      input.value = text;
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    }, text);
    await page.waitForFunction((q) => document.getElementById("search-status").getAttribute("data-done") === q.trim().toLowerCase(), { timeout: 120000 }, text);
    const found = await allResults(page, id);
    if (!found.includes(id)) report.unfound.push({ id, text, status: await page.$eval("#search-status", (n) => n.textContent) });
  }
}

report.cspViolations = await page.evaluate(() => window.__violations);

// Whatever the session holds, nothing it says ran: the flag hostile text would set is unset.
report.pwned = await pwned(page);
report.bodyText = spec.bodyText ? await page.evaluate(() => document.body.innerText) : undefined;

if (spec.hash) {
  const { page: second } = await open(pageUrl + "#leaf=" + encodeURIComponent(spec.hash));
  report.hashPathIds = await conversationIds(second);
  report.hashTarget = await second.$eval("#conversation .entry.target", (n) => n.getAttribute("data-entry-id"));
  report.cspViolations.push(...(await second.evaluate(() => window.__violations)));
  report.pwned = report.pwned ?? (await pwned(second));
}

await browser.close();
process.stdout.write(JSON.stringify(report) + "\n");
