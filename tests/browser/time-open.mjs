// How long a page takes to open in headless chromium until SELECTOR is on it and painted:
// prints {"ms": N, "external": [...]} (requests that are not the page itself are aborted and
// listed). With QUERY (our pages only), then the in-page search: typed once the document is
// read, timed until the viewer reports it done ("searchMs", "searchStatus"). For
// benches/export_html.rs.
//   node time-open.mjs CHROMIUM FILE.html SELECTOR [QUERY]
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

const [chromium, file, selector, query] = process.argv.slice(2);
const url = pathToFileURL(file).href;
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  protocolTimeout: 900000,
});
const page = await browser.newPage();
await page.setViewport({ width: 1400, height: 900 });
const external = [];
await page.setRequestInterception(true);
page.on("request", (request) => {
  const target = request.url();
  if (target.split("#")[0] === url || target.startsWith("data:")) request.continue();
  else {
    external.push(target);
    request.abort();
  }
});
const started = Date.now();
let ms = null;
try {
  // Timed from the navigation, not to the end of the document: a page may show before it is
  // all read.
  page.goto(url, { waitUntil: "load", timeout: 300000 }).catch(() => {});
  await page.waitForSelector(selector, { timeout: 300000 });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  ms = Date.now() - started;
} catch (error) {
  process.stderr.write(`not shown within 300 s: ${error.message}\n`);
}
let searchMs;
let searchStatus;
if (query && ms != null) {
  await page.waitForFunction(() => document.readyState !== "loading", { timeout: 300000 });
  const started = Date.now();
  await page.evaluate((text) => {
    const input = document.getElementById("search");
    input.value = text;
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  }, query);
  await page.waitForFunction(
    (q) => document.getElementById("search-status").getAttribute("data-done") === q.trim().toLowerCase(),
    { timeout: 300000, polling: 10 },
    query,
  );
  searchMs = Date.now() - started;
  searchStatus = await page.$eval("#search-status", (n) => n.textContent);
}
await browser.close();
process.stdout.write(JSON.stringify({ ms, external, searchMs, searchStatus }) + "\n");
