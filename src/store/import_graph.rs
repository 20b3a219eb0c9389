//! The store's modules depend on each other one way: this test reads their sources, finds every
//! path from one module of `store/` into another (`super::…`, `crate::store::…`, re-exported
//! names resolved to the module that defines them) outside test code, and fails on a cycle.
//! Rust compiles cycles between modules without a word, so nothing else would notice one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of `store/` (files and folders) and what `mod.rs` re-exports from each.
struct Store {
    modules: BTreeSet<String>,
    exported: BTreeMap<String, String>,
}

fn store_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store")
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

impl Store {
    fn read() -> Store {
        let root = code_of(&store_dir().join("mod.rs"));
        let mut modules = BTreeSet::new();
        let mut exported = BTreeMap::new();
        // A module compiled for tests only (this one) is no part of the layers.
        let mut for_tests = false;
        for line in root.lines().map(str::trim) {
            if let Some(name) = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                && !for_tests
            {
                modules.insert(name.trim_end_matches(';').to_string());
            }
            for_tests = line == "#[cfg(test)]";
        }
        // `pub use a::{B, C};` may span lines: read it as one statement.
        for statement in root.split(';') {
            let statement = statement.trim();
            if let Some(rest) = statement.strip_prefix("pub use ") {
                let module = identifier_at(rest).to_string();
                let names = &rest[module.len() + 2..];
                let names: Vec<&str> = if names.starts_with('{') {
                    group_heads(names)
                } else {
                    vec![identifier_at(names)]
                };
                for name in names {
                    exported.insert(name.to_string(), module.clone());
                }
            }
        }
        Store { modules, exported }
    }

    /// What `name` (the segment after the store's root) belongs to.
    fn resolve(&self, name: &str, file: &Path) -> String {
        if self.modules.contains(name) {
            name.to_string()
        } else if let Some(module) = self.exported.get(name) {
            module.clone()
        } else {
            panic!(
                "{}: `{name}` is neither a module of store/ nor re-exported by its mod.rs",
                file.display()
            )
        }
    }

    /// The modules `file` (in top-level module `owner`, at `depth` folders below it) reaches.
    fn edges_of(&self, file: &Path, owner: &str, depth: usize) -> BTreeSet<String> {
        let code = code_of(file);
        let mut targets = BTreeSet::new();
        let add = |rest: &str, targets: &mut BTreeSet<String>| {
            let names = if rest.starts_with('{') {
                group_heads(rest)
            } else {
                vec![identifier_at(rest)]
            };
            for name in names {
                targets.insert(self.resolve(name, file));
            }
        };
        for (at, _) in code.match_indices("crate::store::") {
            add(&code[at + "crate::store::".len()..], &mut targets);
        }
        let mut at = 0;
        while let Some(found) = code[at..].find("super::") {
            let start = at + found;
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
            // `super` from a file's module goes to its folder; past the owner's folder is
            // the store's root, where the next segment names a module.
            if !preceded && ups > depth {
                assert_eq!(ups, depth + 1, "{}: a path above store/", file.display());
                add(rest, &mut targets);
            }
        }
        targets.remove(owner);
        targets
    }

    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph = BTreeMap::new();
        for module in &self.modules {
            let dir = store_dir().join(module);
            let mut files = Vec::new();
            if dir.is_dir() {
                collect_files(&dir, 0, &mut files);
            } else {
                files.push((store_dir().join(format!("{module}.rs")), 0));
            }
            let mut targets = BTreeSet::new();
            for (file, depth) in files {
                targets.extend(self.edges_of(&file, module, depth));
            }
            graph.insert(module.clone(), targets);
        }
        graph
    }
}

/// Every `.rs` file under `dir`, with how many folders below the owner's folder it sits (a
/// `mod.rs` speaks for its folder, one level up).
fn collect_files(dir: &Path, level: usize, out: &mut Vec<(PathBuf, usize)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, level + 1, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let is_mod = path.file_name().is_some_and(|n| n == "mod.rs");
            out.push((path, if is_mod { level } else { level + 1 }));
        }
    }
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

#[test]
fn the_store_modules_depend_on_each_other_one_way() {
    let graph = Store::read().graph();
    let found = cycles(&graph);
    let edges = |group: &[String]| {
        group
            .iter()
            .map(|m| {
                let inside: Vec<_> = graph[m].iter().filter(|t| group.contains(t)).collect();
                format!("{m} -> {inside:?}")
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let circles: Vec<String> = found.iter().map(|group| edges(group)).collect();
    assert!(
        circles.is_empty(),
        "store/ modules import each other in a circle: {}",
        circles.join(" | ")
    );
}

#[test]
fn the_reader_sees_paths_between_modules() {
    // The session sits above the loader, which sits above the persisted index: the edges this
    // test must see for the check above to mean anything.
    let graph = Store::read().graph();
    for (from, to) in [
        ("session", "load"),
        ("load", "index_file"),
        ("index_file", "checkpoint"),
        ("tree", "session"),
        ("tree", "tree_memo"),
    ] {
        assert!(
            graph[from].contains(to),
            "{from} -> {to} not seen: {graph:?}"
        );
    }
    let mut looped = graph.clone();
    looped
        .get_mut("index_file")
        .unwrap()
        .insert("session".into());
    assert!(
        cycles(&looped)
            .iter()
            .any(|g| g.contains(&"session".to_string())),
        "an added edge back to session is not found as a cycle"
    );
}
