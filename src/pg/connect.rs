//! Where the database is: `--pg URL` (a URL or a `key=value` string) completed by PGHOST,
//! PGPORT, PGUSER and PGDATABASE the way libpq completes it, and what a run needs of the
//! server before anything is created: reachable, version 15 or later, CREATE on the
//! database.

use std::time::Duration;

use postgres::config::Host;
use postgres::{Client, Config, NoTls};

use crate::error::{Error, Result};

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
        text.parse().map_err(|e| {
            Error::usage(format!(
                "--pg: '{text}' is neither a postgresql:// URL nor a key=value string ({e})"
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
        let user = env("PGUSER").or_else(crate::pg::server::login_name);
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
    Ok(c)
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

/// Connects, or says in one line why not.
pub fn connect(c: &Config, option: &str) -> Result<Client> {
    c.connect(NoTls).map_err(|e| {
        Error::usage(format!(
            "{option}: cannot connect to PostgreSQL at {}: {}",
            describe(c),
            error_text(&e)
        ))
    })
}

/// The server's own message when it sent one, else the client's.
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
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
    }
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
