//! Node's `url.fileURLToPath` for POSIX, as pi's `normalizePath` applies it to `file://` input.
//!
//! Only what a path-producing URL needs is implemented: the host must be empty or `localhost`,
//! the query and fragment are dropped, `\` counts as `/`, dot segments (also percent-encoded
//! ones) are resolved, `%2F` is refused, and percent escapes are decoded as UTF-8.

/// Why a `file://` URL names no path. The messages are Node's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileUrlError {
    Host,
    EncodedSlash,
    Malformed,
}

impl FileUrlError {
    pub(crate) fn message(&self) -> &'static str {
        match self {
            FileUrlError::Host => "File URL host must be \"localhost\" or empty on linux",
            FileUrlError::EncodedSlash => "File URL path must not include encoded / characters",
            FileUrlError::Malformed => "URI malformed",
        }
    }
}

/// The path of a `file://` URL (`url` must start with `file://`).
pub(crate) fn file_url_to_path(url: &str) -> Result<String, FileUrlError> {
    // The URL parser trims C0 controls and spaces at both ends and drops tabs and newlines.
    let cleaned: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let rest = cleaned.strip_prefix("file://").unwrap_or(&cleaned);
    let rest = rest.replace('\\', "/");
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = percent_decode(&rest[..host_end])
        .ok_or(FileUrlError::Malformed)?
        .to_ascii_lowercase();
    if !host.is_empty() && host != "localhost" {
        return Err(FileUrlError::Host);
    }
    let after_host = &rest[host_end..];
    let path_end = after_host.find(['?', '#']).unwrap_or(after_host.len());
    let pathname = resolve_dot_segments(&after_host[..path_end]);
    let lower = pathname.to_ascii_lowercase();
    if lower.contains("%2f") {
        return Err(FileUrlError::EncodedSlash);
    }
    percent_decode(&pathname).ok_or(FileUrlError::Malformed)
}

/// The URL path after WHATWG dot-segment handling (`.`, `..` and their `%2e` spellings).
fn resolve_dot_segments(path: &str) -> String {
    let body = path.strip_prefix('/').unwrap_or(path);
    let pieces: Vec<&str> = body.split('/').collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let lower = piece.to_ascii_lowercase();
        match lower.as_str() {
            ".." | ".%2e" | "%2e." | "%2e%2e" => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            "." | "%2e" => {
                if last {
                    out.push("");
                }
            }
            _ => out.push(piece),
        }
    }
    format!("/{}", out.join("/"))
}

/// `decodeURIComponent`: `%XX` escapes must form valid UTF-8; a stray `%` is an error.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let value = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(value);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_out_as_node_gives_them() {
        assert_eq!(file_url_to_path("file:///tmp/a%20b").unwrap(), "/tmp/a b");
        assert_eq!(file_url_to_path("file://localhost/x").unwrap(), "/x");
        assert_eq!(file_url_to_path("file:///a/b/../c?q#f").unwrap(), "/a/c");
        assert_eq!(file_url_to_path("file:///a/%2e%2E/c").unwrap(), "/c");
        assert_eq!(file_url_to_path("file:///caf%C3%A9").unwrap(), "/café");
        assert_eq!(file_url_to_path("file:////x").unwrap(), "//x");
        assert_eq!(file_url_to_path("file://").unwrap(), "/");
    }

    #[test]
    fn bad_urls_are_refused_with_nodes_reasons() {
        assert_eq!(file_url_to_path("file://host/x"), Err(FileUrlError::Host));
        assert_eq!(
            file_url_to_path("file:///a%2Fb"),
            Err(FileUrlError::EncodedSlash)
        );
        assert_eq!(
            file_url_to_path("file:///a%zz"),
            Err(FileUrlError::Malformed)
        );
        assert_eq!(
            file_url_to_path("file:///%FF"),
            Err(FileUrlError::Malformed)
        );
    }
}
