//! A throwaway PostgreSQL cluster for the tests: Debian's server programs (found with
//! `pg_config --bindir`), `initdb` into a temporary directory, listening on a Unix socket there
//! and on 127.0.0.1 with TLS (a CA and a server certificate made with `openssl`), passwords
//! required (scram-sha-256). PostgreSQL refuses to run as root: as root, its programs run as
//! the `postgres` user the package creates, through `runuser`.
//!
//! Stopped (`pg_ctl stop -m immediate`) and its directory removed by a watchdog, a shell started
//! with the cluster's directory, in its own process group (a Ctrl-C does not reach it), that
//! waits for the end of its standard input: `Cluster::shutdown` (also run by `Drop`) closes it,
//! and so does the kernel when the test process dies, killed or not. A cluster in a `static`,
//! never dropped, is shut down by the suite's end-of-run work.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// The superuser's password in every test cluster.
pub const PASSWORD: &str = "pw-Zq81-secret";

const HOW_TO_INSTALL: &str = "the PostgreSQL tests need Debian's PostgreSQL server: \
    apt-get install -y postgresql (pg_config --bindir must name its programs)";

pub struct Cluster {
    dir: tempfile::TempDir,
    /// Stops the server and removes `dir` when its standard input closes.
    watchdog: Mutex<Option<Child>>,
    bindir: PathBuf,
    as_postgres: bool,
    pub port: u16,
    /// The CA certificate the server's certificate is signed with.
    pub ca_cert: PathBuf,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn bindir() -> PathBuf {
    let output = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .unwrap_or_else(|e| panic!("pg_config: {e}; {HOW_TO_INSTALL}"));
    assert!(
        output.status.success(),
        "pg_config failed; {HOW_TO_INSTALL}"
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    assert!(
        dir.join("initdb").exists() && dir.join("pg_ctl").exists(),
        "no initdb/pg_ctl in {}; {HOW_TO_INSTALL}",
        dir.display()
    );
    dir
}

fn checked(what: &str, output: std::io::Result<Output>) -> Output {
    let output = output.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Makes a CA and a certificate for localhost/127.0.0.1 signed by it, in `dir`.
pub fn make_certificates(dir: &Path, ca_name: &str) {
    let openssl = |args: &[&str]| {
        checked(
            "openssl",
            Command::new("openssl").args(args).current_dir(dir).output(),
        );
    };
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        &format!("/CN={ca_name}"),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
}

impl Cluster {
    /// A new cluster, started.
    pub fn start() -> Cluster {
        let bindir = bindir();
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("pi-session-pg-")
            .tempdir()
            .unwrap();
        let watchdog = watchdog(dir.path(), &bindir, as_postgres);
        make_certificates(dir.path(), "pi-session test CA");
        std::fs::write(dir.path().join("pwfile"), format!("{PASSWORD}\n")).unwrap();
        std::fs::set_permissions(
            dir.path().join("server.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        if as_postgres {
            checked(
                "chown -R postgres",
                Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(dir.path())
                    .output(),
            );
        }
        let cluster = Cluster {
            port: free_port(),
            ca_cert: dir.path().join("ca.crt"),
            dir,
            watchdog: Mutex::new(Some(watchdog)),
            bindir,
            as_postgres,
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                "--pwfile",
                cluster.dir.path().join("pwfile").to_str().unwrap(),
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        let settings = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nfsync = off\n\
             max_connections = 200\nlog_min_messages = warning\n",
            cluster.port,
            cluster.socket_dir().display(),
            cluster.dir.path().join("server.crt").display(),
            cluster.dir.path().join("server.key").display(),
        );
        // TCP connections must use TLS: a test connecting over TCP shows that TLS was used.
        let hba = data.join("pg_hba.conf");
        let rules: String = std::fs::read_to_string(&hba)
            .unwrap()
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&hba, rules).unwrap();
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap();
        text.push_str(&settings);
        std::fs::write(&conf, text).unwrap();
        cluster.pg_ctl(&["start", "-w", "-t", "60"]);
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bindir.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        command.args(args).current_dir(self.dir.path());
        checked(program, command.output())
    }

    pub fn pg_ctl(&self, args: &[&str]) {
        let data = self.data();
        let log = self.dir.path().join("server.log");
        let mut all = vec!["-D", data.to_str().unwrap(), "-l", log.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run("pg_ctl", &all);
    }

    /// Stops the server at once (what a crash looks like to its clients).
    pub fn stop(&self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }

    pub fn start_again(&self) {
        self.pg_ctl(&["start", "-w", "-t", "60"]);
    }

    /// A URL for `database` over the Unix socket, password included.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@{}:{}/{database}",
            encode(self.socket_dir()),
            self.port
        )
    }

    /// The same without the password (it then comes from PGPASSWORD or the pgpass file).
    pub fn url_without_password(&self, database: &str) -> String {
        format!(
            "postgres://postgres@{}:{}/{database}",
            encode(self.socket_dir()),
            self.port
        )
    }

    /// A URL over TCP to localhost with `sslmode` and the CA file.
    pub fn tls_url(&self, database: &str, sslmode: &str, root_cert: &Path) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@localhost:{}/{database}?sslmode={sslmode}&sslrootcert={}",
            self.port,
            encode(root_cert)
        )
    }

    pub fn client(&self, database: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(database), postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to the test cluster: {e}"))
    }

    /// A new, empty database of its own for one test.
    pub fn database(&self, name: &str) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("{name}_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.client("postgres")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        name
    }
}

impl Cluster {
    /// Stops the server and removes its directory (through the watchdog), once; later calls do
    /// nothing.
    pub fn shutdown(&self) {
        let child = self
            .watchdog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut child) = child {
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The watchdog of a cluster in `dir`: when its standard input ends, `pg_ctl stop -m immediate`
/// (nothing happens if the server never started) and `rm -rf dir`.
fn watchdog(dir: &Path, bindir: &Path, as_postgres: bool) -> Child {
    use std::os::unix::process::CommandExt;
    let pg_ctl = bindir.join("pg_ctl");
    let data = dir.join("data");
    let mut stop: Vec<&std::ffi::OsStr> = Vec::new();
    if as_postgres {
        stop.extend(["runuser", "-u", "postgres", "--"].map(std::ffi::OsStr::new));
    }
    stop.push(pg_ctl.as_os_str());
    stop.extend(["-D".as_ref(), data.as_os_str()]);
    stop.extend(["stop", "-m", "immediate", "-w"].map(std::ffi::OsStr::new));
    Command::new("sh")
        .arg("-c")
        .arg(r#"read -r _; "$@" >/dev/null 2>&1; rm -rf -- "$0""#)
        .arg(dir)
        .args(stop)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("starting the cluster's watchdog (sh): {e}"))
}

/// A path as the host part of a URL.
fn encode(path: &Path) -> String {
    path.to_str()
        .unwrap()
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
