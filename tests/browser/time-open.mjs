// How long a page takes to open in headless chromium until SELECTOR is on it and painted:
// prints {"ms": N, "external": [...]} (requests that are not the page itself are aborted and
// listed). For benches/export_html.rs.
//   node time-open.mjs CHROMIUM FILE.html SELECTOR
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

const [chromium, file, selector] = process.argv.slice(2);
const url = pathToFileURL(file).href;
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
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
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 300000 });
  await page.waitForSelector(selector, { timeout: 300000 });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  ms = Date.now() - started;
} catch (error) {
  process.stderr.write(`not shown within 300 s: ${error.message}\n`);
}
await browser.close();
process.stdout.write(JSON.stringify({ ms, external }) + "\n");
