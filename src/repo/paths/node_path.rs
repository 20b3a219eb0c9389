//! Node's `path.posix` functions on strings: `normalize`, `join`, `resolve`, `isAbsolute`.
//!
//! pi builds every session path with these, and compares paths as strings (for instance the
//! session directory against the default one), so the exact spelling matters: `join` collapses
//! `.`/`..` and repeated slashes, `resolve` also drops the trailing slash.

/// `path.isAbsolute(p)`.
pub(crate) fn is_absolute(path: &str) -> bool {
    path.starts_with('/')
}

/// `path.normalize(p)`.
pub(crate) fn normalize(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let absolute = is_absolute(path);
    let trailing_separator = path.ends_with('/');
    let mut out = normalize_segments(path, !absolute);
    if out.is_empty() {
        return match (absolute, trailing_separator) {
            (true, _) => "/".to_string(),
            (false, true) => "./".to_string(),
            (false, false) => ".".to_string(),
        };
    }
    if trailing_separator {
        out.push('/');
    }
    if absolute {
        out.insert(0, '/');
    }
    out
}

/// `path.join(...parts)`: empty parts are ignored, the rest joined with `/` and normalized.
pub(crate) fn join(parts: &[&str]) -> String {
    let joined = parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    if joined.is_empty() {
        return ".".to_string();
    }
    normalize(&joined)
}

/// `path.resolve(base, path)` with `base` standing for `process.cwd()`: the result is absolute,
/// normalized, and has no trailing slash (except for the root itself).
pub(crate) fn resolve(base: &str, path: &str) -> String {
    let combined = if is_absolute(path) {
        path.to_string()
    } else if path.is_empty() {
        base.to_string()
    } else {
        format!("{base}/{path}")
    };
    let absolute = is_absolute(&combined);
    let out = normalize_segments(&combined, !absolute);
    if absolute {
        format!("/{out}")
    } else if out.is_empty() {
        ".".to_string()
    } else {
        out
    }
}

/// Node's `normalizeString`: drops empty and `.` segments, lets `..` remove the previous
/// segment, and keeps leading `..` only for relative paths.
fn normalize_segments(path: &str, allow_above_root: bool) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|last| *last != "..") {
                    segments.pop();
                } else if allow_above_root {
                    segments.push("..");
                }
            }
            other => segments.push(other),
        }
    }
    segments.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values are Node 20's `path.posix` results.
    #[test]
    fn normalize_matches_node() {
        for (input, expected) in [
            ("", "."),
            ("/", "/"),
            ("//a//b/", "/a/b/"),
            ("/a/./b/../c", "/a/c"),
            ("/..", "/"),
            ("a/../..", ".."),
            ("./", "./"),
            ("a/..", "."),
            ("../a/", "../a/"),
        ] {
            assert_eq!(normalize(input), expected, "{input:?}");
        }
    }

    #[test]
    fn join_and_resolve_match_node() {
        assert_eq!(join(&["/tmp/x/", "a.jsonl"]), "/tmp/x/a.jsonl");
        assert_eq!(join(&["rel", "a.jsonl"]), "rel/a.jsonl");
        assert_eq!(join(&["", ""]), ".");
        assert_eq!(join(&["/a", "../b", "c/"]), "/b/c/");
        assert_eq!(resolve("/home/u", "proj/"), "/home/u/proj");
        assert_eq!(resolve("/home/u", "/x/y/../z/"), "/x/z");
        assert_eq!(resolve("/home/u", ""), "/home/u");
        assert_eq!(resolve("/home/u", "../../.."), "/");
        assert_eq!(resolve("/", "."), "/");
        assert_eq!(resolve("/home/u", "//a"), "/a");
    }
}
