//! The crate's modules depend on each other one way. This test reads the sources, finds every
//! path from one module into another (`crate::…`, `super::…`, names re-exported by a folder's
//! `mod.rs` resolved to the module that defines them) outside test code, and fails on
//! - an import between top-level modules that goes up or sideways in [`LAYERS`];
//! - a cycle between the submodules of one top-level module (`ops::ports` <-> `ops::compact`);
//! - the transport (`jsonrpc`) reaching anything of sessions.
//!
//! Rust compiles cycles between modules without a word, so nothing else would notice one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, bottom to top, written once: a module may import only from the
/// layers below its own (not from a module beside it in the same layer). Data flows one way,
/// bytes on disk -> `format` -> `store` -> `repo` -> `catalog` -> the operations -> the front
/// doors. `export` (the renderers) sits below `ops` because exporting is itself an operation
/// (`ops::export` holds its policy and calls a renderer); `inspect` (the command line's
/// documents) sits above, as it reads through `ops`. The transport (`jsonrpc`) sits below the
/// session application it carries; `transcript` plays exchanges over the transport beside it.
const LAYERS: &[&[&str]] = &[
    &["format"],
    &["store"],
    &["repo"],
    &["catalog"],
    &["export"],
    &["ops"],
    &["inspect"],
    &["jsonrpc"],
    &["sidecar", "transcript"],
    &["cli"],
];

/// What the transport may reach outside itself: JSON-level helpers, nothing of sessions.
const TRANSPORT: &str = "jsonrpc";
const TRANSPORT_MAY_REACH: &[&str] = &["format::wire_surrogates"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The source without comments and without its test module (which closes each file here,
/// and may reach anywhere).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn identifier_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first path segment of each member of a `{a, b::c, self}` group at `text`'s start.
fn group_heads(text: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0, 1);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                let head = identifier_at(text[start..i].trim_start());
                if !head.is_empty() {
                    heads.push(head);
                }
                start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads
}

/// The heads a path continues with at `rest`: one name, or each member of a group.
fn heads_at(rest: &str) -> Vec<&str> {
    if rest.starts_with('{') {
        group_heads(rest)
    } else {
        vec![identifier_at(rest)]
    }
}

/// The modules a module file declares (`mod a;`, `pub mod a;`, ...), test-only ones left out.
fn declared_modules(code: &str) -> Vec<String> {
    let mut modules = Vec::new();
    let mut for_tests = false;
    for line in code.lines().map(str::trim) {
        let declared = line
            .strip_prefix("pub ")
            .or_else(|| line.strip_prefix("pub(crate) "))
            .unwrap_or(line)
            .strip_prefix("mod ")
            .filter(|rest| rest.ends_with(';'));
        if let Some(name) = declared
            && !for_tests
        {
            modules.push(name.trim_end_matches(';').to_string());
        }
        if !line.is_empty() {
            for_tests = line == "#[cfg(test)]";
        }
    }
    modules
}

/// What a module file's `pub use a::{B, C};` re-exports: name -> the child module `a`.
fn reexports(code: &str, children: &[String]) -> BTreeMap<String, String> {
    let mut exported = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(rest) = ["pub use ", "pub(crate) use "]
            .iter()
            .find_map(|p| statement.strip_prefix(p))
        else {
            continue;
        };
        let module = identifier_at(rest).to_string();
        if !children.contains(&module) {
            continue;
        }
        for name in heads_at(&rest[module.len() + 2..]) {
            exported.insert(name.to_string(), module.clone());
        }
    }
    exported
}

/// A module's file and the files of the modules below it, each with how many folders below
/// the module's own folder it sits (a `mod.rs` speaks for its folder, one level up).
fn files_of(file: &Path, level: usize, out: &mut Vec<(PathBuf, usize)>) {
    out.push((file.to_path_buf(), level));
    let is_mod = file.file_name().is_some_and(|n| n == "mod.rs");
    let dir = if is_mod {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    for child in declared_modules(&code_of(file)) {
        let single = dir.join(format!("{child}.rs"));
        let (path, child_level) = if single.is_file() {
            (single, level + 1)
        } else {
            (dir.join(&child).join("mod.rs"), level + 1)
        };
        files_of(&path, child_level, out);
    }
}

fn module_file(dir: &Path, name: &str) -> PathBuf {
    let single = dir.join(format!("{name}.rs"));
    if single.is_file() {
        single
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// One top-level module: its submodules and what its root re-exports from each.
struct TopModule {
    name: String,
    root: PathBuf,
    children: Vec<String>,
    exported: BTreeMap<String, String>,
}

impl TopModule {
    fn read(name: &str) -> TopModule {
        let root = module_file(&src_dir(), name);
        let code = code_of(&root);
        let children = declared_modules(&code);
        let exported = reexports(&code, &children);
        TopModule {
            name: name.to_string(),
            root,
            children,
            exported,
        }
    }

    /// The submodule `head` (a path segment just below this module's root) belongs to, or
    /// `None` for what the root defines itself.
    fn resolve(&self, head: &str) -> Option<String> {
        if self.children.iter().any(|c| c == head) {
            Some(head.to_string())
        } else {
            self.exported.get(head).cloned()
        }
    }
}

/// Every path from one module into another.
#[derive(Default, Debug, Clone)]
struct Graph {
    /// Top-level module -> the top-level modules it reaches (with the submodule path reached).
    top: BTreeMap<String, BTreeSet<String>>,
    /// Top-level module -> its submodules -> the sibling submodules each reaches.
    inner: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl Graph {
    fn read() -> Graph {
        let crate_root = code_of(&src_dir().join("lib.rs"));
        let tops: Vec<TopModule> = declared_modules(&crate_root)
            .iter()
            .map(|name| TopModule::read(name))
            .collect();
        let by_name: BTreeMap<&str, &TopModule> =
            tops.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut graph = Graph::default();
        for top in &tops {
            let reached = graph.top.entry(top.name.clone()).or_default();
            let inner = graph.inner.entry(top.name.clone()).or_default();
            // The root's own file reaches other top-level modules; its children are its own.
            let mut files = vec![(None, top.root.clone(), 0)];
            for child in &top.children {
                let dir = top.root.parent().unwrap();
                let mut below = Vec::new();
                files_of(&module_file(dir, child), 0, &mut below);
                files.extend(below.into_iter().map(|(f, d)| (Some(child.clone()), f, d)));
            }
            for (owner, file, depth) in files {
                let targets = inner.entry(owner.clone().unwrap_or_default()).or_default();
                for path in paths_of(&code_of(&file), depth + usize::from(owner.is_some())) {
                    match path {
                        Reached::Crate(other, next) if other != top.name => {
                            let Some(other_top) = by_name.get(other.as_str()) else {
                                continue;
                            };
                            for head in next {
                                let sub = other_top.resolve(&head).unwrap_or(head);
                                reached.insert(format!("{other}::{sub}"));
                            }
                        }
                        Reached::Crate(_, next) | Reached::Root(next) => {
                            if let Some(owner) = &owner {
                                for head in next {
                                    if let Some(sub) = top.resolve(&head)
                                        && &sub != owner
                                    {
                                        targets.insert(sub);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            inner.remove("");
        }
        graph
    }

    /// The top-level modules `module` reaches.
    fn top_edges(&self, module: &str) -> BTreeSet<&str> {
        self.top[module]
            .iter()
            .map(|p| p.split("::").next().unwrap())
            .collect()
    }
}

/// Where a path found in a file leads.
enum Reached {
    /// `crate::module::{heads}`.
    Crate(String, Vec<String>),
    /// The root of the file's own top-level module (through `super::`), then `{heads}`.
    Root(Vec<String>),
}

/// The paths in `code` that leave the file's own submodule: `crate::…`, and `super::…` climbing
/// past `levels` folders (to its top-level module's root; one more is the crate's root).
fn paths_of(code: &str, levels: usize) -> Vec<Reached> {
    let owned = |names: Vec<&str>| names.into_iter().map(str::to_string).collect::<Vec<_>>();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let preceded = code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$');
        if preceded {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let module = identifier_at(rest);
        let next = rest[module.len()..].strip_prefix("::").unwrap_or("");
        found.push(Reached::Crate(module.to_string(), owned(heads_at(next))));
    }
    let mut at = 0;
    while let Some(offset) = code[at..].find("super::") {
        let start = at + offset;
        let preceded = code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let mut rest = &code[start..];
        let mut ups = 0;
        while let Some(after) = rest.strip_prefix("super::") {
            ups += 1;
            rest = after;
        }
        at = code.len() - rest.len();
        if preceded || ups < levels {
            continue;
        }
        if ups == levels {
            found.push(Reached::Root(owned(heads_at(rest))));
        } else {
            let module = identifier_at(rest);
            let next = rest[module.len()..].strip_prefix("::").unwrap_or("");
            found.push(Reached::Crate(module.to_string(), owned(heads_at(next))));
        }
    }
    found
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("top-level module `{module}` has no place in LAYERS"))
}

/// Each import between top-level modules that does not go down the layers.
fn upward(graph: &Graph) -> Vec<String> {
    let mut wrong = Vec::new();
    for (module, reached) in &graph.top {
        for path in reached {
            let target = path.split("::").next().unwrap();
            if layer_of(target) >= layer_of(module) {
                wrong.push(format!("{module} -> {path}"));
            }
        }
    }
    wrong
}

/// The strongly connected groups of more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        next: usize,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, node: &'a str) {
        s.index.insert(node, s.next);
        s.low.insert(node, s.next);
        s.next += 1;
        s.stack.push(node);
        for next in s.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !s.index.contains_key(next) {
                visit(s, next);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.stack.contains(&next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut group = Vec::new();
            while let Some(member) = s.stack.pop() {
                group.push(member.to_string());
                if member == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        next: 0,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found.sort();
    state.found
}

/// Each cycle between the submodules of one top-level module, with its edges.
fn inner_cycles(graph: &Graph) -> Vec<String> {
    let mut circles = Vec::new();
    for (top, inner) in &graph.inner {
        for group in cycles(inner) {
            let edges: Vec<String> = group
                .iter()
                .map(|m| {
                    let inside: Vec<_> = inner[m].iter().filter(|t| group.contains(t)).collect();
                    format!("{top}::{m} -> {inside:?}")
                })
                .collect();
            circles.push(edges.join("; "));
        }
    }
    circles
}

#[test]
fn top_level_modules_import_only_from_the_layers_below() {
    let graph = Graph::read();
    let wrong = upward(&graph);
    assert!(
        wrong.is_empty(),
        "imports up or sideways in the layers ({LAYERS:?}): {wrong:#?}"
    );
}

#[test]
fn the_submodules_of_each_module_depend_on_each_other_one_way() {
    let circles = inner_cycles(&Graph::read());
    assert!(
        circles.is_empty(),
        "submodules import each other in a circle: {circles:#?}"
    );
}

#[test]
fn the_transport_knows_no_sessions() {
    let graph = Graph::read();
    let outside: Vec<&String> = graph.top[TRANSPORT]
        .iter()
        .filter(|path| !TRANSPORT_MAY_REACH.contains(&path.as_str()))
        .collect();
    assert!(
        outside.is_empty(),
        "{TRANSPORT} reaches beyond the transport: {outside:?}"
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let graph = Graph::read();
    for module in graph.top.keys() {
        layer_of(module);
    }
    for layer in LAYERS.iter().flat_map(|l| l.iter()) {
        // `catalog` is written on another branch; every other layer is a module here.
        assert!(
            graph.top.contains_key(*layer) || *layer == "catalog",
            "LAYERS names `{layer}`, which is not a module of the crate"
        );
    }
}

#[test]
fn the_reader_sees_paths_between_modules() {
    // Edges the checks above must see to mean anything, at both levels and through each
    // kind of path (`crate::`, `super::`, a re-exported name).
    let graph = Graph::read();
    for (from, to) in [
        ("store", "format"),
        ("repo", "store"),
        ("ops", "repo"),
        ("sidecar", "jsonrpc"),
        ("sidecar", "ops"),
        ("cli", "ops"),
    ] {
        assert!(
            graph.top_edges(from).contains(to),
            "{from} -> {to} not seen: {:?}",
            graph.top[from]
        );
    }
    for (top, from, to) in [
        ("store", "session", "load"),
        ("store", "load", "index_file"),
        ("store", "tree", "tree_memo"),
        ("sidecar", "handlers", "wire"),
    ] {
        assert!(
            graph.inner[top][from].contains(to),
            "{top}::{from} -> {to} not seen: {:?}",
            graph.inner[top]
        );
    }
}

#[test]
fn a_planted_cycle_or_upward_import_is_found() {
    let graph = Graph::read();
    let mut looped = graph.clone();
    looped
        .inner
        .get_mut("store")
        .unwrap()
        .get_mut("index_file")
        .unwrap()
        .insert("session".into());
    assert!(
        inner_cycles(&looped)
            .iter()
            .any(|c| c.contains("store::session")),
        "an added edge back to store::session is not found as a cycle"
    );
    let mut upward_import = graph.clone();
    upward_import
        .top
        .get_mut("store")
        .unwrap()
        .insert("ops::config".into());
    assert_eq!(upward(&upward_import), vec!["store -> ops::config"]);
    let mut sideways = graph;
    sideways
        .top
        .get_mut("sidecar")
        .unwrap()
        .insert("transcript::player".into());
    assert_eq!(upward(&sideways), vec!["sidecar -> transcript::player"]);
}
