// Runs pi 0.82.1's own /tree selector over a session, for the tree filter tests
// (tests/rpc_tree_pages.rs).
//
//   node pi-tree-filter.mjs ORACLE_DIR FILE [FILE...]
//
// Opens each FILE with SessionManager.open (on a temporary copy: open may rewrite old files),
// builds the TreeSelectorComponent pi's interactive mode shows for /tree, once per filter mode
// (default, no-tools, user-only, labeled-only, all), and prints one JSON array: per file
// {"file", "leafId", "modes": {MODE: [ids of the rows shown, in the selector's order]}}.
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, ...files] = process.argv.slice(2);
const dist = join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist");
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { SessionManager } = await load("core/session-manager.js");
const { TreeSelectorComponent } = await load("modes/interactive/components/tree-selector.js");
const { initTheme } = await load("modes/interactive/theme/theme.js");
initTheme("dark");

const modes = ["default", "no-tools", "user-only", "labeled-only", "all"];
const out = [];
const work = mkdtempSync(join(tmpdir(), "pi-tree-filter-"));
for (const file of files) {
  const copy = join(work, basename(file));
  copyFileSync(file, copy);
  const session = SessionManager.open(copy);
  const leafId = session.getLeafId();
  const shown = {};
  for (const mode of modes) {
    const selector = new TreeSelectorComponent(session.getTree(), leafId, 40, () => {}, () => {}, () => {}, undefined, mode);
    shown[mode] = selector.getTreeList().filteredNodes.map((flat) => flat.node.entry.id);
  }
  out.push({ file, leafId, modes: shown });
}
process.stdout.write(`${JSON.stringify(out)}\n`);
