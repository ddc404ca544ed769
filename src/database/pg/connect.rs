//! Where the database is: `--pg URL` (a URL or a `key=value` string) completed by PGHOST,
//! PGPORT, PGUSER and PGDATABASE the way libpq completes it, and what a run needs of the
//! server before anything is created: reachable, version 15 or later, CREATE on the
//! database.
//!
//! The password, as libpq finds it: the one in the string, else `PGPASSWORD`, else the
//! password file (`PGPASSFILE`, or `~/.pgpass`: ignored with a warning unless only its owner
//! may read it), else — when the server asks for one and standard input is a terminal — a
//! prompt on the terminal. It lives only in memory: every text made of the connection goes
//! through [`crate::safety::secret::redact`], and [`describe`] never holds it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres::config::Host;
use postgres::{Client, Config, NoTls};

use crate::error::{Error, Result};
use crate::units::Shown;

/// The socket directory libpq uses when no host is given (Debian's build).
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// The oldest major version `dbio pg` runs on.
pub const MIN_VERSION_NUM: i32 = 150_000;

/// The connection `text` names (a URL or `key=value` string; empty: the environment alone),
/// with what it leaves out taken from PGHOST, PGPORT, PGUSER and PGDATABASE, then libpq's
/// defaults (the local socket directory, the user's own name).
pub fn config(text: &str) -> Result<Config> {
    config_with(text, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

fn config_with(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
    let mut c: Config = if text.trim().is_empty() {
        Config::new()
    } else {
        text.parse().map_err(|e: postgres::Error| {
            Error::usage(format!(
                "--pg: '{}' is neither a postgresql:// URL nor a key=value string ({})",
                crate::safety::secret::redact(text),
                crate::safety::secret::redact(&e.to_string())
            ))
        })?
    };
    if c.get_hosts().is_empty() {
        let host = env("PGHOST").unwrap_or_else(|| DEFAULT_SOCKET_DIR.into());
        for h in host.split(',') {
            if h.starts_with('/') {
                c.host_path(h);
            } else {
                c.host(h);
            }
        }
    }
    if c.get_ports().is_empty()
        && let Some(p) = env("PGPORT")
    {
        let port: u16 = p
            .parse()
            .map_err(|_| Error::usage(format!("PGPORT: '{p}' is not a port number")))?;
        c.port(port);
    }
    if c.get_user().is_none() {
        let user = env("PGUSER").or_else(crate::database::pg::server::login_name);
        match user {
            Some(u) => {
                c.user(&u);
            }
            None => return Err(Error::usage("--pg: no user given (user=..., or PGUSER)")),
        }
    }
    if c.get_dbname().is_none()
        && let Some(d) = env("PGDATABASE")
    {
        c.dbname(&d);
    }
    if c.get_connect_timeout().is_none() {
        c.connect_timeout(Duration::from_secs(10));
    }
    c.application_name("dbio");
    fill_password_with(&mut c, env);
    Ok(c)
}

/// Gives `c` the password libpq would find when its string has none: `PGPASSWORD`, else
/// the password file.
pub fn fill_password(c: &mut Config) {
    fill_password_with(c, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
}

fn fill_password_with(c: &mut Config, env: &dyn Fn(&str) -> Option<String>) {
    if c.get_password().is_none() {
        if let Some(p) = env("PGPASSWORD") {
            c.password(p);
        } else if let Some(p) = password_from_file(c, env) {
            c.password(p);
        }
    }
}

/// The password file libpq reads: `PGPASSFILE`, else `~/.pgpass`.
fn password_file(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
}

/// The password for `c` in the password file, by libpq's rules: lines
/// `hostname:port:database:username:password`, `*` matching anything, `\:` and `\\`
/// escaped; the first matching line wins. A socket directory matches as its path, or as
/// `localhost` when it is the default one. A file others may read or write is ignored with
/// a warning, as libpq does.
fn password_from_file(c: &Config, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = password_file(env)?;
    let md = std::fs::metadata(&path).ok()?;
    if !md.is_file() {
        return None;
    }
    if md.mode() & 0o077 != 0 {
        // libpq's warning, and what it does: the file is not used.
        stderr_line!(
            "dbio: warning: password file {} has group or world access; permissions should be u=rw (0600) or less: it is ignored",
            path.shown()
        );
        return None;
    }
    // Read at most 1 MiB: a password file is a few lines.
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(std::fs::File::open(&path).ok()?, 1 << 20),
        &mut text,
    )
    .ok()?;
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) if p == Path::new(DEFAULT_SOCKET_DIR) => "localhost".into(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = c.get_user().unwrap_or("");
    let db = c.get_dbname().unwrap_or(user);
    lookup_password(&text, [host.as_str(), &port, db, user])
}

/// The password of the first line of a password file's `text` matching `want` (host,
/// port, database, user).
fn lookup_password(text: &str, want: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        // Split on unescaped colons, undoing the escapes.
        let mut fields: Vec<String> = vec![String::new()];
        let mut chars = line.chars();
        while let Some(ch) = chars.next() {
            match ch {
                '\\' => {
                    if let Some(n) = chars.next() {
                        fields.last_mut().expect("one").push(n);
                    }
                }
                ':' if fields.len() < 5 => fields.push(String::new()),
                _ => fields.last_mut().expect("one").push(ch),
            }
        }
        if fields.len() != 5 {
            continue;
        }
        let matches = (0..4).all(|i| fields[i] == "*" || fields[i] == want[i]);
        if matches {
            return Some(fields.pop().expect("five"));
        }
    }
    None
}
/// Where `c` points, for messages: host (or socket directory), port, database, user.
pub fn describe(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "?".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    let user = c.get_user().unwrap_or("?");
    let db = c.get_dbname().unwrap_or(user);
    format!("{user}@{host}:{port}/{db}")
}

/// A `key=value` string that reaches the same server, database and user as `c` — without
/// its password (libpq finds that again in `PGPASSWORD`, the password file or a prompt):
/// what a printed command may hold.
pub fn conninfo(c: &Config) -> String {
    let quoted = |v: &str| {
        if !v.is_empty()
            && v.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "/._-:".contains(ch))
        {
            v.to_string()
        } else {
            format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
        }
    };
    let mut parts = Vec::new();
    match c.get_hosts().first() {
        Some(Host::Tcp(h)) => parts.push(format!("host={}", quoted(h))),
        Some(Host::Unix(p)) => parts.push(format!("host={}", quoted(&p.display().to_string()))),
        None => {}
    }
    if let Some(p) = c.get_ports().first() {
        parts.push(format!("port={p}"));
    }
    if let Some(u) = c.get_user() {
        parts.push(format!("user={}", quoted(u)));
    }
    if let Some(d) = c.get_dbname() {
        parts.push(format!("dbname={}", quoted(d)));
    }
    parts.join(" ")
}

/// Connects, or says in one line why not. When the server asks for a password that none
/// of the string, `PGPASSWORD` and the password file gave, and standard input is a
/// terminal, it is asked for on the terminal (not echoed) and kept in `c` for the run's
/// other connections.
pub fn connect(c: &mut Config, option: &str) -> Result<Client> {
    let failed = |c: &Config, e: &postgres::Error| {
        Error::usage(format!(
            "{option}: cannot connect to PostgreSQL at {}: {}",
            describe(c),
            error_text(e)
        ))
    };
    match c.connect(NoTls) {
        Ok(client) => Ok(client),
        Err(e) if c.get_password().is_none() && asks_for_password(&e) => {
            // SAFETY: isatty only reads the descriptor's state.
            if unsafe { libc::isatty(0) } != 1 {
                return Err(Error::usage(format!(
                    "{option}: PostgreSQL at {} asks for a password: give it in PGPASSWORD or a password file (~/.pgpass, mode 0600), or run dbio on a terminal to be asked",
                    describe(c)
                )));
            }
            let p = prompt_password(&format!("Password for {}: ", describe(c)))
                .map_err(|e| Error::usage(format!("{option}: cannot read a password: {e}")))?;
            c.password(p);
            c.connect(NoTls).map_err(|e| failed(c, &e))
        }
        Err(e) => Err(failed(c, &e)),
    }
}

/// Whether connecting failed because the server asked for a password and there was none.
fn asks_for_password(e: &postgres::Error) -> bool {
    e.as_db_error().is_none() && error_text(e).contains("password missing")
}

/// Reads a line from the terminal (`/dev/tty`) with echo off, after writing `prompt` there.
pub(crate) fn prompt_password(prompt: &str) -> std::io::Result<String> {
    use std::io::{BufRead, Write};
    use std::os::fd::AsRawFd;
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data, filled by tcgetattr on a valid descriptor.
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut old) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut quiet = old;
    quiet.c_lflag &= !libc::ECHO;
    quiet.c_lflag |= libc::ECHONL;
    // SAFETY: as above; the old state is put back below whatever happens.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    let mut w = &tty;
    let _ = w.write_all(prompt.as_bytes());
    let _ = w.flush();
    let mut line = String::new();
    let read = std::io::BufReader::new(&tty).read_line(&mut line);
    // SAFETY: as above.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    read?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// The server's own message when it sent one, else the client's.
pub fn error_text(e: &postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut text = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                text = format!("{text}: {s}");
                src = s.source();
            }
            text
        }
    };
    crate::safety::secret::redact(&text).into_owned()
}

/// What a run checked on the server before creating anything.
#[derive(Debug, Clone)]
pub struct Checked {
    pub version_num: i32,
    pub version: String,
    pub superuser: bool,
}

/// Version 15 or later, and CREATE on the current database (a schema is made there);
/// refused as bad input otherwise, naming `option`.
pub fn check_server(client: &mut Client, c: &Config, option: &str) -> Result<Checked> {
    let row = client
        .query_one(
            "SELECT current_setting('server_version_num')::int, current_setting('server_version'),
                    has_database_privilege(current_database(), 'CREATE'),
                    (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
            &[],
        )
        .map_err(|e| Error::usage(format!("{option}: {}", error_text(&e))))?;
    let version_num: i32 = row.get(0);
    let version: String = row.get(1);
    let create: bool = row.get(2);
    let superuser: Option<bool> = row.get(3);
    if version_num < MIN_VERSION_NUM {
        return Err(Error::usage(format!(
            "{option}: PostgreSQL {version} at {} is older than 15, the oldest dbio pg runs on",
            describe(c)
        )));
    }
    if !create {
        return Err(Error::usage(format!(
            "{option}: user {} has no CREATE privilege on database {} at {}; dbio pg makes its one schema there (GRANT CREATE ON DATABASE ... TO ...)",
            c.get_user().unwrap_or("?"),
            c.get_dbname().or(c.get_user()).unwrap_or("?"),
            describe(c)
        )));
    }
    Ok(Checked {
        version_num,
        version,
        superuser: superuser.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_environment_fills_what_the_url_leaves_out() {
        let c = config_with(
            "dbname=x",
            &env(&[("PGHOST", "/tmp/s"), ("PGPORT", "5499"), ("PGUSER", "u")]),
        )
        .unwrap();
        assert_eq!(c.get_hosts(), &[Host::Unix("/tmp/s".into())]);
        assert_eq!(c.get_ports(), &[5499]);
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_dbname(), Some("x"));
        // What is given wins over the environment.
        let c = config_with(
            "postgresql://a@h:6000/d",
            &env(&[("PGHOST", "/tmp/s"), ("PGUSER", "u"), ("PGDATABASE", "e")]),
        )
        .unwrap();
        assert_eq!(c.get_hosts(), &[Host::Tcp("h".into())]);
        assert_eq!(c.get_user(), Some("a"));
        assert_eq!(c.get_dbname(), Some("d"));
        assert_eq!(describe(&c), "a@h:6000/d");
        assert_eq!(conninfo(&c), "host=h port=6000 user=a dbname=d");
        let c = config_with("host='/tmp/a b' user=me password=pw dbname=x", &env(&[])).unwrap();
        assert_eq!(conninfo(&c), "host='/tmp/a b' user=me dbname=x");
        let back = config_with(&conninfo(&c), &env(&[])).unwrap();
        assert_eq!(back.get_hosts(), c.get_hosts());
    }

    #[test]
    fn the_password_file_is_read_as_libpq_reads_it() {
        let text = "# comment\n\
                    other:5432:*:*:no\n\
                    /tmp/s:5499:x:u:first\\:pw\n\
                    *:*:*:u:second\n";
        assert_eq!(
            lookup_password(text, ["/tmp/s", "5499", "x", "u"]).as_deref(),
            Some("first:pw")
        );
        assert_eq!(
            lookup_password(text, ["h", "1", "d", "u"]).as_deref(),
            Some("second")
        );
        assert_eq!(lookup_password(text, ["h", "1", "d", "v"]), None);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:u:pw\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let f = file.display().to_string();
        let vars = move |k: &str| match k {
            "PGPASSFILE" => Some(f.clone()),
            "PGUSER" => Some("u".into()),
            _ => None,
        };
        let c = config_with("host=/tmp/s", &vars).unwrap();
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
        // Readable by others: ignored, as libpq ignores it.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = config_with("host=/tmp/s", &vars).unwrap();
        assert_eq!(c.get_password(), None);
        // PGPASSWORD wins over the file, and the string over both.
        let c = config_with("host=/tmp/s password=given", &vars).unwrap();
        assert_eq!(c.get_password(), Some(&b"given"[..]));
    }

    #[test]
    fn a_bad_string_echoes_no_password() {
        let Err(Error::Usage(m)) =
            config_with("postgresql://u:topsecret@[/db", &env(&[("PGUSER", "u")]))
        else {
            panic!("not refused")
        };
        assert!(!m.contains("topsecret"), "{m}");
        assert!(m.contains("u:****@"), "{m}");
    }

    #[test]
    fn a_bad_string_or_port_is_one_usage_error() {
        assert!(matches!(
            config_with("postgresql://[", &env(&[("PGUSER", "u")])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            config_with("", &env(&[("PGUSER", "u"), ("PGPORT", "x")])),
            Err(Error::Usage(m)) if m.contains("PGPORT")
        ));
    }
}
