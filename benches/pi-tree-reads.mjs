// pi's in-memory figures for the reads a tree UI makes, beside `tree_reads`: the session is
// opened with pi's SessionManager (not timed), then getTree(), getBranch() and the /tree
// selector built over the tree in its default filter mode are timed, best of RUNS.
// Usage: node pi-tree-reads.mjs ORACLE_DIR FILE [RUNS]
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [oracleDir, file, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const dist = join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist");
const { SessionManager } = await import(pathToFileURL(join(dist, "core/session-manager.js")).href);
const { TreeSelectorComponent } = await import(
  pathToFileURL(join(dist, "modes/interactive/components/tree-selector.js")).href
);
const { initTheme } = await import(pathToFileURL(join(dist, "modes/interactive/theme/theme.js")).href);
initTheme?.("dark");

const session = SessionManager.open(file);
const best = (work) => {
  let ms = Infinity;
  let out;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    out = work();
    ms = Math.min(ms, performance.now() - started);
  }
  return { ms, out };
};
const tree = best(() => session.getTree());
const branch = best(() => session.getBranch());
const selector = best(() => {
  const component = new TreeSelectorComponent(session.getTree(), session.getLeafId(), 40, () => {}, () => {}, () => {});
  return component.getTreeList().filteredNodes.length;
});
process.stdout.write(
  `${JSON.stringify({
    getTree: tree.ms,
    getBranch: branch.ms,
    branchEntries: branch.out.length,
    selectorDefault: selector.ms,
    selectorRows: selector.out,
    entries: session.getEntries().length,
  })}\n`,
);
