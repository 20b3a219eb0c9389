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
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
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

async function pwned(page) {
  return page.evaluate(() => window.__pwned ?? null);
}

const { page, elapsed } = await open(pageUrl);
if (spec.timing) report.firstRenderMs = elapsed;
report.treeIds = await page.$$eval("#tree [data-entry-id]", (nodes) => nodes.map((n) => n.getAttribute("data-entry-id")));
report.pathIds = await conversationIds(page);
report.activeIds = await page.$$eval("#tree .node.active", (nodes) => nodes.map((n) => n.getAttribute("data-entry-id")));
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
  await page.evaluate((id) => {
    const node = [...document.querySelectorAll("#tree .node")].find((n) => n.getAttribute("data-entry-id") === id);
    node.scrollIntoView({ block: "center" });
  }, spec.click);
  const node = await page.evaluateHandle(
    (id) => [...document.querySelectorAll("#tree .node")].find((n) => n.getAttribute("data-entry-id") === id),
    spec.click,
  );
  await node.click();
  report.clickedPathIds = await conversationIds(page);
  report.clickedHash = await page.evaluate(() => location.hash);
  report.clickedSelected = await page.$eval("#tree .node.selected", (n) => n.getAttribute("data-entry-id"));
}

if (spec.search) {
  await page.type("#search", spec.search);
  await page.waitForFunction(() => !document.querySelector("#results").hidden, { timeout: 10000 });
  report.searchIds = await page.$$eval("#results .result", (nodes) => nodes.map((n) => n.getAttribute("data-entry-id")));
  report.searchStatus = await page.$eval("#search-status", (n) => n.textContent);
}

// Whatever the session holds, nothing it says ran: the flag hostile text would set is unset.
report.pwned = await pwned(page);
report.bodyText = spec.bodyText ? await page.evaluate(() => document.body.innerText) : undefined;

if (spec.hash) {
  const { page: second } = await open(pageUrl + "#leaf=" + encodeURIComponent(spec.hash));
  report.hashPathIds = await conversationIds(second);
  report.hashTarget = await second.$eval("#conversation .entry.target", (n) => n.getAttribute("data-entry-id"));
  report.pwned = report.pwned ?? (await pwned(second));
}

await browser.close();
process.stdout.write(JSON.stringify(report) + "\n");
