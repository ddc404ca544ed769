//! Where the server is: `--mysql mysql://user@host[:port]/db[?socket=PATH]`, and what a run
//! needs of it before anything is created: reachable, MariaDB 10.6+ or MySQL 8.0+, and the
//! privileges to make one database (CREATE, DROP on `dbio_%`), read performance_schema and
//! INNODB_METRICS (PROCESS; the run says what it cannot see instead).
//!
//! The password is never on the command line: a URL holding one is refused; it comes from
//! `MYSQL_PWD` (as the mariadb client takes it), or — when the server refuses the login
//! without one and standard input is a terminal — from a prompt on the terminal. It lives
//! only in memory; every text made of a connection goes through
//! [`crate::safety::secret::redact`], and [`Target::describe`] never holds it.

use std::path::PathBuf;
use std::time::Duration;

use mysql::{Conn, OptsBuilder};

use crate::error::{Error, Result};

/// Where the server is and who connects.
#[derive(Clone, Default)]
pub struct Target {
    /// A Unix socket (preferred), else a host and port.
    pub socket: Option<PathBuf>,
    pub host: String,
    pub port: u16,
    pub user: String,
    /// The database the connection starts in (`mysql` when none is given).
    pub db: Option<String>,
    /// Only in memory, never shown.
    password: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The error of an unparsable `--mysql`.
fn bad(text: &str, why: &str) -> Error {
    Error::usage(format!(
        "--mysql: '{}' {why}; give mysql://user@host[:port]/db or mysql://user@localhost/db?socket=/path/to/mysqld.sock",
        crate::safety::secret::redact(text)
    ))
}

/// Undoes %XX escapes.
fn unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl Target {
    /// The server `text` names (`mysql://` or `mariadb://`), with `MYSQL_PWD` as its
    /// password when set.
    pub fn parse(text: &str) -> Result<Target> {
        Self::parse_with(
            text,
            std::env::var("MYSQL_PWD").ok().filter(|p| !p.is_empty()),
        )
    }

    fn parse_with(text: &str, password: Option<String>) -> Result<Target> {
        let rest = text
            .strip_prefix("mysql://")
            .or_else(|| text.strip_prefix("mariadb://"))
            .ok_or_else(|| bad(text, "is not a mysql:// URL"))?;
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (auth_host, db) = main.split_once('/').unwrap_or((main, ""));
        let (auth, hostport) = match auth_host.rsplit_once('@') {
            Some((a, h)) => (Some(a), h),
            None => (None, auth_host),
        };
        let mut t = Target {
            port: 3306,
            password,
            ..Target::default()
        };
        if let Some(a) = auth {
            if a.contains(':') {
                return Err(Error::usage(format!(
                    "--mysql: '{}' holds a password, which would be on the command line (and in the process list); give it in MYSQL_PWD, or run dbio on a terminal to be asked",
                    crate::safety::secret::redact(text)
                )));
            }
            t.user = unescape(a).ok_or_else(|| bad(text, "has a bad %-escape in the user"))?;
        }
        if t.user.is_empty() {
            t.user = crate::database::throwaway::login_name().unwrap_or_else(|| "root".into());
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, Some(p)),
            _ => (hostport, None),
        };
        t.host = if host.is_empty() {
            "localhost".into()
        } else {
            host.trim_matches(['[', ']']).into()
        };
        if let Some(p) = port {
            t.port = p
                .parse()
                .map_err(|_| bad(text, "has a port that is not a number"))?;
        }
        if !db.is_empty() {
            t.db =
                Some(unescape(db).ok_or_else(|| bad(text, "has a bad %-escape in the database"))?);
        }
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match k {
                "socket" => {
                    let p =
                        unescape(v).ok_or_else(|| bad(text, "has a bad %-escape in the socket"))?;
                    if !p.starts_with('/') {
                        return Err(bad(text, "has a socket that is not an absolute path"));
                    }
                    t.socket = Some(PathBuf::from(p));
                }
                "password" | "pass" => {
                    return Err(Error::usage(format!(
                        "--mysql: '{}' holds a password, which would be on the command line; give it in MYSQL_PWD, or run dbio on a terminal to be asked",
                        crate::safety::secret::redact(text)
                    )));
                }
                other => {
                    return Err(bad(
                        text,
                        &format!(
                            "has '{}', which dbio does not take (socket= only)",
                            crate::units::echoed(other)
                        ),
                    ));
                }
            }
        }
        Ok(t)
    }

    /// A throwaway server's: root (no password) on `socket`.
    pub fn socket(socket: PathBuf) -> Target {
        Target {
            socket: Some(socket),
            host: "localhost".into(),
            port: 0,
            user: "root".into(),
            db: Some("mysql".into()),
            password: None,
        }
    }

    /// `user@host:port/db` or `user@/path/sock/db`, for messages: never the password.
    pub fn describe(&self) -> String {
        let at = match &self.socket {
            Some(s) => s.display().to_string(),
            None => format!("{}:{}", self.host, self.port),
        };
        format!("{}@{at}/{}", self.user, self.db.as_deref().unwrap_or(""))
    }

    /// The URL that reaches the same server as the same user, without a password: what a
    /// printed command may hold.
    pub fn url(&self) -> String {
        let esc = |s: &str| {
            s.bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect::<String>()
        };
        let mut u = format!("mysql://{}@", esc(&self.user));
        match &self.socket {
            Some(_) => u.push_str("localhost"),
            None => u.push_str(&format!("{}:{}", self.host, self.port)),
        }
        u.push('/');
        u.push_str(&esc(self.db.as_deref().unwrap_or("")));
        if let Some(s) = &self.socket {
            u.push_str(&format!(
                "?socket={}",
                esc(&s.display().to_string()).replace("%2F", "/")
            ));
        }
        u
    }

    fn opts(&self, db: Option<&str>) -> OptsBuilder {
        let o = OptsBuilder::new()
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            .db_name(db.map(str::to_string))
            .tcp_connect_timeout(Some(Duration::from_secs(10)))
            .stmt_cache_size(Some(32));
        match &self.socket {
            Some(s) => o.socket(Some(s.display().to_string())).prefer_socket(true),
            None => o
                .ip_or_hostname(Some(self.host.clone()))
                .tcp_port(self.port)
                .prefer_socket(false),
        }
    }

    /// Connects (to database `db`, else the URL's), or says in one line why not, naming
    /// `option`. When the server refuses a login without a password and standard input is a
    /// terminal, the password is asked for (not echoed) and kept for the run's other
    /// connections.
    pub fn connect_to(&mut self, db: Option<&str>, option: &str) -> Result<Conn> {
        let db = db.or(self.db.as_deref()).map(str::to_string);
        match Conn::new(self.opts(db.as_deref())) {
            Ok(c) => Ok(c),
            Err(e) if self.password.is_none() && server_code(&e) == Some(1045) => {
                // SAFETY: isatty only reads the descriptor's state.
                if unsafe { libc::isatty(0) } != 1 {
                    return Err(Error::usage(format!(
                        "{option}: the server at {} refused {} without a password ({}): give it in MYSQL_PWD, or run dbio on a terminal to be asked",
                        self.describe(),
                        self.user,
                        error_text(&e)
                    )));
                }
                let p = crate::database::pg::connect::prompt_password(&format!(
                    "Password for {}: ",
                    self.describe()
                ))
                .map_err(|e| Error::usage(format!("{option}: cannot read a password: {e}")))?;
                self.password = Some(p);
                Conn::new(self.opts(db.as_deref())).map_err(|e| self.failed(option, &e))
            }
            Err(e) => Err(self.failed(option, &e)),
        }
    }

    /// [`Target::connect_to`] the URL's database.
    pub fn connect(&mut self, option: &str) -> Result<Conn> {
        self.connect_to(None, option)
    }

    fn failed(&self, option: &str, e: &mysql::Error) -> Error {
        Error::usage(format!(
            "{option}: cannot connect to the server at {}: {}",
            self.describe(),
            error_text(e)
        ))
    }
}

/// The server's error code, when the server answered with an error.
pub fn server_code(e: &mysql::Error) -> Option<u16> {
    match e {
        mysql::Error::MySqlError(m) => Some(m.code),
        _ => None,
    }
}

/// The server's own message when it sent one, else the client's, on one line, secrets
/// redacted.
pub fn error_text(e: &mysql::Error) -> String {
    let text = match e {
        mysql::Error::MySqlError(m) => format!("{} ({})", m.message, m.code),
        other => other.to_string(),
    };
    crate::safety::secret::redact(&text.replace('\n', " ")).into_owned()
}

/// What a run checked on the server before creating anything.
#[derive(Debug, Clone)]
pub struct Checked {
    /// `VERSION()`.
    pub version: String,
    pub mariadb: bool,
    /// Whether PROCESS (INNODB_METRICS) and SELECT on performance_schema are granted.
    pub process: bool,
    pub performance_schema: bool,
}

/// `10.11.19-MariaDB-0+deb12u1` → (10, 11).
pub fn version_of(v: &str) -> Option<(u32, u32)> {
    let mut it = v.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// MariaDB 10.6+ or MySQL 8.0+, and the privilege to create a database named `dbio_...`;
/// refused as bad input otherwise, naming `option`.
pub fn check_server(c: &mut Conn, t: &Target, option: &str) -> Result<Checked> {
    use mysql::prelude::Queryable;
    let q = |c: &mut Conn, sql: &str| -> Result<Option<String>> {
        c.query_first::<Option<String>, _>(sql)
            .map(|r| r.flatten())
            .map_err(|e| Error::usage(format!("{option}: {}", error_text(&e))))
    };
    let version = q(c, "SELECT VERSION()")?.unwrap_or_default();
    let mariadb = version.to_ascii_lowercase().contains("mariadb");
    let supported = match version_of(&version) {
        Some((major, minor)) if mariadb => (major, minor) >= (10, 6),
        Some((major, _)) => major >= 8,
        None => false,
    };
    if !supported {
        return Err(Error::usage(format!(
            "{option}: the server at {} is {version}; dbio mysql runs on MariaDB 10.6 or later and MySQL 8.0 or later",
            t.describe()
        )));
    }
    let grants: Vec<String> = c
        .query("SHOW GRANTS FOR CURRENT_USER()")
        .map_err(|e| Error::usage(format!("{option}: {}", error_text(&e))))?;
    let all = grants.iter().any(|g| g.contains("ALL PRIVILEGES ON *.*"));
    let create = all
        || grants.iter().any(|g| {
            (g.contains(" ON *.*") || g.contains("`dbio\\_%`") || g.contains("`dbio_%`"))
                && g.contains("CREATE")
                && g.contains("DROP")
        });
    if !create {
        return Err(Error::usage(format!(
            "{option}: user {} at {} may not create and drop the database dbio makes (dbio_<run id>); GRANT ALL ON `dbio\\_%`.* TO ... (and PROCESS, SELECT ON performance_schema.* to see the server's counters)",
            t.user,
            t.describe()
        )));
    }
    let process = all
        || grants
            .iter()
            .any(|g| g.contains(" ON *.*") && g.contains("PROCESS"));
    let performance_schema = q(c, "SELECT @@performance_schema")?.is_some_and(|v| v == "1");
    Ok(Checked {
        version,
        mariadb,
        process,
        performance_schema,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_the_server_and_never_holds_a_password() {
        let t = Target::parse_with(
            "mysql://me@localhost/shop?socket=/run/mysqld/mysqld.sock",
            None,
        )
        .unwrap();
        assert_eq!(
            t.socket.as_deref(),
            Some(std::path::Path::new("/run/mysqld/mysqld.sock"))
        );
        assert_eq!((t.user.as_str(), t.db.as_deref()), ("me", Some("shop")));
        assert_eq!(t.describe(), "me@/run/mysqld/mysqld.sock/shop");
        assert_eq!(
            t.url(),
            "mysql://me@localhost/shop?socket=/run/mysqld/mysqld.sock"
        );
        let back = Target::parse_with(&t.url(), None).unwrap();
        assert_eq!(back.describe(), t.describe());
        let t = Target::parse_with("mysql://u@db.example:3307/x", None).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("db.example", 3307));
        for bad in ["mysql://u:secret@h/x", "mysql://u@h/x?password=secret"] {
            let Err(Error::Usage(m)) = Target::parse_with(bad, None) else {
                panic!("{bad} taken")
            };
            assert!(!m.contains("secret") && m.contains("MYSQL_PWD"), "{m}");
        }
        assert!(Target::parse_with("postgresql://x", None).is_err());
        assert!(Target::parse_with("mysql://u@h:x/d", None).is_err());
        assert!(Target::parse_with("mysql://u@h/d?socket=rel", None).is_err());
        assert_eq!(version_of("10.11.19-MariaDB-0+deb12u1"), Some((10, 11)));
        assert_eq!(version_of("8.0.36"), Some((8, 0)));
    }
}
