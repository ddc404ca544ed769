//! A throwaway PostgreSQL server (`--pg-bin DIR`): `initdb` in the run directory as an
//! unprivileged user, listening on a private Unix socket only, with settings for a
//! measurement, stopped (fast shutdown) and removed at the end — on errors and on signals
//! too. The postmaster is dbio's own child in a session of its own (a Ctrl-C on the
//! terminal reaches dbio, which stops it in order), and it is told to shut down should
//! dbio die (parent-death signal), so it never outlives dbio.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use postgres::Config;

use crate::error::{Error, Result};
use crate::safety::cleanup::{PG_DATA_DIR, PG_SOCKET_DIR};
use crate::safety::exec::Program;
use crate::units::Shown;

pub use crate::database::throwaway::{
    CREATE_SERVER_USER, RunAs, SERVER_USER, login_name, reachable_by,
};
use crate::database::throwaway::{MadeDirs, hand_over_dir, make_server_dirs};

/// The socket's port number (it only names the socket file in a private directory).
const PORT: u16 = 5432;
/// The role initdb makes, which dbio connects as.
const ROLE: &str = "dbio";

/// `initdb` and `postgres` of `--pg-bin`, each checked ([`Program`]): no user but root
/// (or the one running dbio) could have written them or a directory above them.
#[derive(Debug, Clone)]
pub struct Binaries {
    initdb: Program,
    postgres: Program,
}

impl Binaries {
    /// The programs of `bin`, checked before anything runs or is created.
    pub fn of(bin: &Path) -> Result<Binaries> {
        let one = |prog: &str| -> Result<Program> {
            Program::at(&bin.join(prog))
                .map_err(|e| Error::usage(format!("--pg-bin {}: {e}", bin.shown())))?
                .ok_or_else(|| {
                    Error::usage(format!(
                        "--pg-bin {}: no {prog} there; give the directory of PostgreSQL's programs, e.g. /usr/lib/postgresql/15/bin",
                        bin.shown()
                    ))
                })
        };
        let initdb = one("initdb")?;
        let postgres = one("postgres")?;
        // initdb runs the postgres beside its own (resolved) file: that one passes too.
        if let Some(dir) = initdb.path().parent() {
            Program::at(&dir.join("postgres"))
                .map_err(|e| Error::usage(format!("--pg-bin {}: {e}", bin.shown())))?;
        }
        Ok(Binaries { initdb, postgres })
    }
}

/// The major version of the binaries (`postgres --version`, run as the server's user),
/// checked before anything is created: the version is 15 or later.
pub fn check_version(bins: &Binaries, who: &RunAs) -> Result<u32> {
    let shown = bins.postgres.path().shown();
    let mut cmd = bins.postgres.command();
    cmd.arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    who.apply(&mut cmd, false);
    let out = cmd
        .output()
        .map_err(|e| Error::usage(format!("--pg-bin: cannot run {shown} --version: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let major = parse_major(&text).ok_or_else(|| {
        Error::usage(format!(
            "--pg-bin: {shown} --version said '{}', not a PostgreSQL version",
            crate::units::echoed(text.trim())
        ))
    })?;
    if major < 15 {
        return Err(Error::usage(format!(
            "--pg-bin: {shown} is PostgreSQL {major}, older than 15, the oldest dbio pg runs on"
        )));
    }
    Ok(major)
}

/// `postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)` → 15.
fn parse_major(text: &str) -> Option<u32> {
    let after = text.split(')').nth(1)?.trim_start();
    let num: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    num.parse().ok()
}

/// The user the server will run as (checked before anything is created).
pub fn run_as(bins: &Binaries) -> Result<RunAs> {
    RunAs::find("--pg-bin", &[&bins.initdb, &bins.postgres])
}

/// A throwaway server: its directory (data directory and log) and its socket directory.
pub struct Server {
    bins: Binaries,
    pub major: u32,
    /// `<run dir>/pg`: data directory and log, removed at the end.
    dir: PathBuf,
    /// A private directory for the Unix socket (short: socket paths are limited to 107 bytes).
    sock: PathBuf,
    who: RunAs,
    /// `-c NAME=VALUE` the server starts with: dbio's, then `--pg-set`'s.
    pub settings: Vec<(String, String)>,
    child: Option<Child>,
    /// `dir` and `sock`, as made, with their leftover records (noted before each was made).
    made: MadeDirs,
}

impl Server {
    /// Makes `dir` (which must not exist), owned by the server's user, and runs initdb in
    /// it. On failure nothing is left.
    pub fn create(
        bins: &Binaries,
        major: u32,
        who: RunAs,
        dir: &Path,
        sessions: u32,
        pg_set: &[(String, String)],
    ) -> Result<Server> {
        // What --pg-set gives was checked when it was parsed; checked again here, where it
        // reaches the server, whoever built the list.
        for (n, v) in pg_set {
            crate::options::pg_set::check(n, v).map_err(|why| {
                Error::usage(format!(
                    "--pg-set {}: {why}",
                    crate::units::echoed(&format!("{n}={v}"))
                ))
            })?;
        }
        let (sock, dir_record, sock_record) =
            make_server_dirs(&who, dir, PG_DATA_DIR, "pg", PG_SOCKET_DIR, "--pg-bin")?;
        let mut settings: Vec<(String, String)> = vec![
            ("listen_addresses".into(), String::new()),
            ("max_connections".into(), (sessions + 10).to_string()),
            ("shared_buffers".into(), "128MB".into()),
            ("autovacuum".into(), "off".into()),
            ("track_io_timing".into(), "on".into()),
            ("track_wal_io_timing".into(), "on".into()),
            ("max_parallel_workers_per_gather".into(), "0".into()),
            ("fsync".into(), "on".into()),
            ("logging_collector".into(), "off".into()),
        ];
        if major >= 16 {
            settings.push(("debug_io_direct".into(), "data".into()));
        }
        settings.extend(pg_set.iter().cloned());
        let mut s = Server {
            bins: bins.clone(),
            major,
            dir: dir.to_path_buf(),
            sock,
            who,
            settings,
            child: None,
            made: MadeDirs::default(),
        };
        s.made.push(&s.dir, dir_record);
        s.made.push(&s.sock, sock_record);
        s.initdb()?; // on error, Drop removes both directories
        Ok(s)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    fn initdb(&mut self) -> Result<()> {
        hand_over_dir(&self.dir, &self.who)?;
        let log = self.log_file()?;
        let mut cmd = self.bins.initdb.command();
        cmd.args(["-D"])
            .arg(self.data())
            .args([
                "-U",
                ROLE,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ])
            .stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| Error::io("cannot open", &self.log(), &e))?,
            )
            .stderr(log);
        self.who.apply(&mut cmd, false);
        let status = crate::database::throwaway::run_setup(&mut cmd, "--pg-bin", "initdb")?;
        if !status.success() {
            return Err(Error::other(format!(
                "--pg-bin: initdb failed ({status}): {}",
                self.log_tail()
            )));
        }
        Ok(())
    }

    /// The server's log, opened for appending. The directory holding it belongs to the
    /// server's user, who could put a link there: the log is opened without following one,
    /// must be a plain file with one name, and is handed over through its descriptor.
    fn log_file(&self) -> Result<File> {
        let f = self.open_log(true)?;
        if self.who.drop {
            std::os::unix::fs::fchown(&f, Some(self.who.uid), Some(self.who.gid))
                .map_err(|e| Error::io("cannot hand over", &self.log(), &e))?;
        }
        Ok(f)
    }

    /// The log, never through a symlink, and only a plain file with one name.
    fn open_log(&self, append: bool) -> Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.log();
        let f = std::fs::OpenOptions::new()
            .read(!append)
            .create(append)
            .append(append)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, &e))?;
        let md = f
            .metadata()
            .map_err(|e| Error::io("cannot stat", &path, &e))?;
        if !md.is_file() || md.nlink() != 1 {
            return Err(Error::other(format!(
                "{}: not the plain file the server's log should be; left alone",
                path.shown()
            )));
        }
        Ok(f)
    }

    /// What the server's log says went wrong: its last FATAL, PANIC or ERROR line, else its
    /// last lines, on one line.
    fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = self.open_log(false) {
            let _ = std::io::Read::read_to_string(&mut f, &mut text);
        }
        log_reason(&text)
    }

    /// Starts the postmaster and waits until it accepts connections (at most a minute).
    pub fn start(&mut self) -> Result<()> {
        let log = self.log_file()?;
        let mut cmd = self.bins.postgres.command();
        cmd.arg("-D")
            .arg(self.data())
            .arg("-k")
            .arg(&self.sock)
            .args(["-p", &PORT.to_string()]);
        for (n, v) in &self.settings {
            cmd.arg("-c").arg(format!("{n}={v}"));
        }
        cmd.stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| Error::io("cannot open", &self.log(), &e))?,
            )
            .stderr(log);
        self.who.apply(&mut cmd, true);
        let child = cmd
            .spawn()
            .map_err(|e| Error::other(format!("--pg-bin: cannot start postgres: {e}")))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                self.child = None;
                return Err(Error::usage(format!(
                    "--pg-bin: postgres did not start ({status}): {}",
                    self.log_tail()
                )));
            }
            if self.config().connect(postgres::NoTls).is_ok() {
                return Ok(());
            }
            if let Err(e) = crate::database::throwaway::heard_stop("postgres started") {
                self.stop();
                return Err(e);
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(Error::other(format!(
                    "--pg-bin: postgres did not accept connections within a minute: {}",
                    self.log_tail()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Fast shutdown (what `pg_ctl -m fast stop` sends: SIGINT to the postmaster), then
    /// immediate, then kill, waiting for the postmaster to exit.
    pub fn stop(&mut self) {
        crate::database::throwaway::stop(
            self.child.take(),
            &[
                (libc::SIGINT, Duration::from_secs(30)),
                (libc::SIGQUIT, Duration::from_secs(10)),
                (libc::SIGKILL, Duration::from_secs(10)),
            ],
        );
    }

    /// The postmaster's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// How to connect: the private socket, as the role initdb made.
    pub fn config(&self) -> Config {
        let mut c = Config::new();
        c.host_path(&self.sock)
            .port(PORT)
            .user(ROLE)
            .dbname("postgres")
            .application_name("dbio")
            .connect_timeout(Duration::from_secs(10));
        c
    }

    /// The data directory (local and readable by dbio).
    pub fn data_directory(&self) -> PathBuf {
        self.data()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        // What could not be removed stays noted: `dbio doctor` names it.
        self.made.remove();
    }
}

fn log_reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let bad = ["FATAL:", "PANIC:", "ERROR:", "initdb: error:"];
    if let Some(l) = lines
        .iter()
        .rev()
        .find(|l| bad.iter().any(|b| l.contains(b)))
    {
        return l.trim().to_string();
    }
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_major_version_is_read_from_postgres_version() {
        assert_eq!(
            parse_major("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n"),
            Some(15)
        );
        assert_eq!(parse_major("postgres (PostgreSQL) 18.4\n"), Some(18));
        assert_eq!(parse_major("something else"), None);
    }

    #[test]
    fn the_logs_reason_is_its_last_fatal_line() {
        let log = "Success. You can now start the database server\n\n2026 GMT [1] FATAL:  unrecognized configuration parameter \"io_method\"\n2026 GMT [1] LOG:  database system is shut down\n";
        assert!(log_reason(log).ends_with("unrecognized configuration parameter \"io_method\""));
        assert_eq!(log_reason("a\nb\nc\nd\n"), "b / c / d");
    }
}
