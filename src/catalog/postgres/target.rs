//! Where the team database is: a `postgres://` URL read the way libpq reads it as far as this
//! program needs (host, port, user, database, `sslmode`, `sslrootcert`), the password from the
//! URL, else `PGPASSWORD`, else the pgpass file. The password is kept out of every message:
//! URLs are quoted through [`masked`].

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use postgres::config::{Host, SslMode};

use crate::catalog::CatalogError;

/// How long connecting may take before it is reported as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the environment says about PostgreSQL connections (read once by `ops::Config`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PgEnv {
    /// `$PGPASSWORD`.
    pub(crate) password: Option<String>,
    /// `$PGPASSFILE`, else `~/.pgpass`.
    pub(crate) passfile: Option<PathBuf>,
    /// The login name, the user when the URL names none (as libpq defaults it).
    pub(crate) os_user: Option<String>,
    /// `~/.postgresql/root.crt`, the CA file `verify-ca`/`verify-full` use by default.
    pub(crate) default_root_cert: Option<PathBuf>,
}

/// The TLS the URL asks for (libpq's `sslmode` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tls {
    Disable,
    /// `allow`, `prefer` (the default): encrypted when the server offers it, not verified.
    Prefer,
    /// Encrypted, the certificate not verified.
    Require,
    /// Encrypted, the certificate verified against the root certificates, not the host name.
    VerifyCa,
    /// Encrypted, certificate and host name verified.
    VerifyFull,
}

/// A parsed team database URL, ready to connect.
#[derive(Clone)]
pub(crate) struct Target {
    /// The URL with its password masked, for messages.
    pub(crate) shown: String,
    pub(crate) config: postgres::Config,
    pub(crate) tls: Tls,
    pub(crate) root_cert: Option<PathBuf>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// `url` with any password (in the user part or a `password=` parameter) replaced by `***`.
pub(crate) fn masked(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(at) => rest.split_at(at),
                None => (rest, ""),
            };
            let authority = match authority.rsplit_once('@') {
                Some((user_info, hosts)) => match user_info.split_once(':') {
                    Some((user, _)) => format!("{user}:***@{hosts}"),
                    None => authority.to_string(),
                },
                None => authority.to_string(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => base.to_string(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k == "password" => format!("{k}=***"),
                _ => p.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

impl Target {
    /// Reads `url` (`postgres://` or `postgresql://`); errors name the URL, masked.
    pub(crate) fn parse(url: &str, env: &PgEnv) -> Result<Target, CatalogError> {
        let shown = masked(url);
        let bad = |why: String| CatalogError::new(format!("{shown}: {why}"));
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(bad(
                "not a PostgreSQL URL (expected postgres://user@host/database)".into(),
            ));
        }
        // sslmode's verify-* values and sslrootcert are ours to handle (the client library
        // knows disable/prefer/require only); the rest of the URL is passed on as written.
        let mut tls = Tls::Prefer;
        let mut root_cert = None;
        let (base, query) = match url.split_once('?') {
            Some((b, q)) => (b, q),
            None => (url, ""),
        };
        let mut kept = Vec::new();
        for param in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = param.split_once('=').unwrap_or((param, ""));
            match key {
                "sslmode" => {
                    tls = match value {
                        "disable" => Tls::Disable,
                        "allow" | "prefer" => Tls::Prefer,
                        "require" => Tls::Require,
                        "verify-ca" => Tls::VerifyCa,
                        "verify-full" => Tls::VerifyFull,
                        other => {
                            return Err(bad(format!(
                                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                            )));
                        }
                    }
                }
                "sslrootcert" => root_cert = Some(PathBuf::from(percent_decode(value))),
                "sslcert" | "sslkey" | "sslcrl" | "sslpassword" => {
                    return Err(bad(format!(
                        "{key} (client certificates) is not supported; use a password"
                    )));
                }
                _ => kept.push(param),
            }
        }
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        let mut config = postgres::Config::from_str(&rest).map_err(|e| bad(e.to_string()))?;
        config.ssl_mode(match tls {
            Tls::Disable => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        if config.get_user().is_none() {
            match &env.os_user {
                Some(user) => config.user(user),
                None => return Err(bad("the URL names no user".into())),
            };
        }
        if config.get_hosts().is_empty() {
            // libpq's default: the Unix socket directory of Debian's server.
            config.host_path("/var/run/postgresql");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("pi-session");
        if config.get_password().is_none() {
            let password = env.password.clone().filter(|p| !p.is_empty()).or_else(|| {
                env.passfile
                    .as_deref()
                    .and_then(|file| from_passfile(file, &config))
            });
            if let Some(password) = password {
                config.password(password);
            }
        }
        if matches!(tls, Tls::VerifyCa | Tls::VerifyFull) && root_cert.is_none() {
            root_cert = env.default_root_cert.clone();
            if root_cert.as_deref().is_none_or(|p| !p.exists()) {
                return Err(bad(
                    "sslmode=verify-ca/verify-full needs the server's root certificate: add sslrootcert=FILE (or put it in ~/.postgresql/root.crt)".into(),
                ));
            }
        }
        Ok(Target {
            shown,
            config,
            tls,
            root_cert,
        })
    }
}

/// The password the pgpass `file` holds for this connection (`host:port:database:user:password`
/// lines, `*` matching anything, `\` escaping `:` and `\`), as libpq looks it up.
fn from_passfile(file: &Path, config: &postgres::Config) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        // libpq matches a Unix socket against `localhost`.
        Some(Host::Unix(_)) | None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let database = config.get_dbname().map_or(user.clone(), str::to_string);
    let wanted = [host, port, database, user];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = pgpass_fields(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(&wanted)
                .all(|(field, want)| field == "*" || field == want);
            matches.then(|| fields[4].clone())
        })
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().unwrap().push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            masked("postgres://ann:s3cret@db:5432/team?sslmode=require&password=x"),
            "postgres://ann:***@db:5432/team?sslmode=require&password=***"
        );
        assert_eq!(masked("postgres://ann@db/team"), "postgres://ann@db/team");
    }

    #[test]
    fn pgpass_lines_match_with_wildcards_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:*:*:*:no\nlocalhost:*:team:ann:pa\\:ss\n",
        )
        .unwrap();
        let config = postgres::Config::from_str("postgres://ann@%2Ftmp/team").unwrap();
        assert_eq!(from_passfile(&file, &config).as_deref(), Some("pa:ss"));
    }

    #[test]
    fn verify_modes_are_ours_and_need_a_root_certificate() {
        let env = PgEnv {
            os_user: Some("ann".into()),
            ..PgEnv::default()
        };
        let t = Target::parse("postgres://db/team?sslmode=disable", &env).unwrap();
        assert_eq!(t.tls, Tls::Disable);
        assert_eq!(t.config.get_user(), Some("ann"));
        let e = Target::parse("postgres://u:pw@db/team?sslmode=verify-full", &env).unwrap_err();
        assert!(e.message.contains("sslrootcert"), "{e}");
        assert!(!e.message.contains("pw@"), "{e}");
        let e = Target::parse("postgres://db/team?sslmode=sometimes", &env).unwrap_err();
        assert!(e.message.contains("sslmode=sometimes"), "{e}");
    }
}
