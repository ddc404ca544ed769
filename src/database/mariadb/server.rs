//! A throwaway MariaDB server (`--mysql-bin DIR`): `mariadb-install-db` into the run
//! directory as an unprivileged user, `mariadbd` listening on a private Unix socket only
//! (`--skip-networking`), `--no-defaults` first so no option file of the host is read,
//! performance_schema on, its buffer pool neither dumped nor loaded; stopped (SIGTERM,
//! its normal shutdown) and removed at the end — on errors and on signals too. The server
//! is dbio's own child in a session of its own, told to shut down should dbio die
//! (parent-death signal), so it never outlives dbio.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::database::throwaway::{MadeDirs, RunAs, hand_over_dir, make_server_dirs};
use crate::error::{Error, Result};
use crate::safety::cleanup::{MYSQL_DATA_DIR, MYSQL_SOCKET_DIR};
use crate::safety::exec::Program;
use crate::units::Shown;

use super::connect::Target;

/// The option that names the binaries, in messages.
const OPTION: &str = "--mysql-bin";
/// The socket's name in its private directory.
pub const SOCKET: &str = "mysqld.sock";

/// The programs of `--mysql-bin DIR`, each checked ([`Program`]): `DIR/mariadbd`, and
/// `mariadb-install-db` and `my_print_defaults` in `DIR/../bin` (Debian's layout: the
/// install script runs `<prefix>/sbin/mariadbd`, the one checked here).
#[derive(Debug, Clone)]
pub struct Binaries {
    pub mariadbd: Program,
    install_db: Program,
    prefix: PathBuf,
}

impl Binaries {
    pub fn of(dir: &Path) -> Result<Binaries> {
        let refuse = |why: String| Error::usage(format!("{OPTION} {}: {why}", dir.shown()));
        let one = |p: PathBuf, name: &str| -> Result<Program> {
            Program::at(&p).map_err(|e| refuse(e.to_string()))?.ok_or_else(|| {
                refuse(format!(
                    "no {name} at {}; give the directory of mariadbd, e.g. /usr/sbin (mariadb-install-db is looked for in ../bin)",
                    p.shown()
                ))
            })
        };
        let mariadbd = one(dir.join("mariadbd"), "mariadbd")?;
        let prefix = dir
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| refuse("no directory above it".into()))?;
        let install_db = one(prefix.join("bin/mariadb-install-db"), "mariadb-install-db")?;
        one(prefix.join("bin/my_print_defaults"), "my_print_defaults")?;
        // The install script runs <prefix>/sbin/mariadbd: it must be the one checked.
        let run = one(prefix.join("sbin/mariadbd"), "mariadbd")?;
        if run.path() != mariadbd.path() {
            return Err(refuse(format!(
                "mariadb-install-db would run {}, not {}: give the sbin directory of one installation",
                run.path().shown(),
                mariadbd.path().shown()
            )));
        }
        Ok(Binaries {
            mariadbd,
            install_db,
            prefix,
        })
    }

    /// The programs a throwaway server's user must not own.
    pub fn programs(&self) -> [&Program; 2] {
        [&self.mariadbd, &self.install_db]
    }
}

/// `mariadbd --version` run as the server's user, checked before anything is created:
/// MariaDB 10.6 or later (a throwaway MySQL is not made: use --mysql).
pub fn check_version(bins: &Binaries, who: &RunAs) -> Result<String> {
    let shown = bins.mariadbd.path().shown();
    let mut cmd = bins.mariadbd.command();
    cmd.arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    who.apply(&mut cmd, false);
    let out = cmd
        .output()
        .map_err(|e| Error::usage(format!("{OPTION}: cannot run {shown} --version: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let version = text
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .unwrap_or("")
        .to_string();
    let ok = version.contains("MariaDB")
        && super::connect::version_of(&version).is_some_and(|v| v >= (10, 6));
    if !ok {
        return Err(Error::usage(format!(
            "{OPTION}: {shown} --version said '{}': a throwaway server needs MariaDB 10.6 or later (for MySQL, give an existing server with --mysql)",
            crate::units::echoed(text.trim())
        )));
    }
    Ok(version)
}

/// A throwaway server: its directory (data directory, logs, tmpdir) and its socket
/// directory.
pub struct Server {
    bins: Binaries,
    /// `<run dir>/mysql`, removed at the end.
    dir: PathBuf,
    /// A private, short directory for the socket (paths are limited to 107 bytes).
    sock: PathBuf,
    who: RunAs,
    /// `--NAME=VALUE` the server starts with: dbio's, then `--mysql-set`'s.
    pub settings: Vec<(String, String)>,
    child: Option<Child>,
    /// `dir` and `sock`, as made, with their leftover records (noted before each was made).
    made: MadeDirs,
}

/// What dbio starts every throwaway server with (before `--mysql-set`).
fn own_settings(sessions: u32) -> Vec<(String, String)> {
    [
        ("performance_schema", "ON".to_string()),
        (
            "performance_schema_consumer_events_waits_current",
            "ON".into(),
        ),
        ("innodb_buffer_pool_size", "256M".into()),
        ("innodb_buffer_pool_load_at_startup", "0".into()),
        ("innodb_buffer_pool_dump_at_shutdown", "0".into()),
        ("innodb_monitor_enable", "trx_rw_commits".into()),
        // A page read again is made young at once: the index's inner pages stay in a
        // small buffer pool, and a lookup reads one page (its leaf).
        ("innodb_old_blocks_time", "0".into()),
        // The page cleaner keeps this many pages free: more than a small pool holds would
        // make it evict the index's inner pages too.
        ("innodb_lru_scan_depth", "100".into()),
        ("max_connections", (sessions + 20).to_string()),
        ("character_set_server", "latin1".into()),
        ("skip_name_resolve", "ON".into()),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect()
}

impl Server {
    /// Makes `dir` (which must not exist), owned by the server's user, and runs
    /// mariadb-install-db in it. On failure nothing is left.
    pub fn create(
        bins: &Binaries,
        who: RunAs,
        dir: &Path,
        sessions: u32,
        set: &[(String, String)],
    ) -> Result<Server> {
        // Checked when parsed; checked again where it reaches the server.
        for (n, v) in set {
            crate::options::mysql_set::check(n, v).map_err(|why| {
                Error::usage(format!(
                    "--mysql-set {}: {why}",
                    crate::units::echoed(&format!("{n}={v}"))
                ))
            })?;
        }
        let (sock, dir_record, sock_record) =
            make_server_dirs(&who, dir, MYSQL_DATA_DIR, "mysql", MYSQL_SOCKET_DIR, OPTION)?;
        let mut settings = own_settings(sessions);
        for (n, v) in set {
            settings.retain(|(m, _)| m != n);
            settings.push((n.clone(), v.clone()));
        }
        let mut s = Server {
            bins: bins.clone(),
            dir: dir.to_path_buf(),
            sock,
            who,
            settings,
            child: None,
            made: MadeDirs::default(),
        };
        s.made.push(&s.dir, dir_record);
        s.made.push(&s.sock, sock_record);
        s.install()?; // on error, Drop removes both directories
        Ok(s)
    }

    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// The server's error log (`--log-error`), written by the server.
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("error.log")
    }

    fn install_log(&self) -> PathBuf {
        self.dir.join("install.log")
    }

    pub fn socket(&self) -> PathBuf {
        self.sock.join(SOCKET)
    }

    /// The value a setting starts with.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `name` for the next start (dbio's own choice: one the user gave wins).
    pub fn default_setting(&mut self, name: &str, value: &str, user: &[(String, String)]) {
        if user.iter().any(|(n, _)| n == name) {
            return;
        }
        self.settings.retain(|(n, _)| n != name);
        self.settings.push((name.into(), value.into()));
    }

    fn install(&mut self) -> Result<()> {
        hand_over_dir(&self.dir, &self.who)?;
        let tmp = self.tmp();
        std::fs::create_dir(&tmp).map_err(|e| Error::io("cannot create", &tmp, &e))?;
        hand_over_dir(&tmp, &self.who)?;
        let log = open_log(&self.install_log(), true)?;
        let mut cmd = self.bins.install_db.command();
        // --no-defaults first: no option file of the host is read.
        cmd.arg("--no-defaults")
            .arg(format!("--basedir={}", self.bins.prefix.display()))
            .arg(format!("--datadir={}", self.data().display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
            ])
            .stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| Error::io("cannot open", &self.install_log(), &e))?,
            )
            .stderr(log);
        self.who.apply(&mut cmd, false);
        let status = crate::database::throwaway::run_setup(&mut cmd, OPTION, "mariadb-install-db")?;
        if !status.success() {
            return Err(Error::other(format!(
                "{OPTION}: mariadb-install-db failed ({status}): {}",
                log_reason(&read_log(&self.install_log()))
            )));
        }
        Ok(())
    }

    /// Starts mariadbd and waits until it accepts connections on its socket (at most a
    /// minute).
    pub fn start(&mut self) -> Result<()> {
        let mut cmd = self.bins.mariadbd.command();
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.data().display()))
            .arg(format!("--socket={}", self.socket().display()))
            .arg("--skip-networking")
            .arg(format!(
                "--pid-file={}",
                self.dir.join("mariadbd.pid").display()
            ))
            .arg(format!("--log-error={}", self.error_log().display()))
            .arg(format!("--tmpdir={}", self.tmp().display()));
        for (n, v) in &self.settings {
            cmd.arg(format!("--{n}={v}"));
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.who.apply_with(&mut cmd, Some(libc::SIGTERM));
        let child = cmd
            .spawn()
            .map_err(|e| Error::other(format!("{OPTION}: cannot start mariadbd: {e}")))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut target = self.target();
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                self.child = None;
                return Err(Error::usage(format!(
                    "{OPTION}: mariadbd did not start ({status}): {}",
                    log_reason(&read_log(&self.error_log()))
                )));
            }
            if self.socket().exists() && target.connect("--mysql-bin").is_ok() {
                return Ok(());
            }
            if let Err(e) = crate::database::throwaway::heard_stop("mariadbd started") {
                self.stop();
                return Err(e);
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(Error::other(format!(
                    "{OPTION}: mariadbd did not accept connections within a minute: {}",
                    log_reason(&read_log(&self.error_log()))
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A normal shutdown (SIGTERM), then kill, waiting for mariadbd to exit.
    pub fn stop(&mut self) {
        crate::database::throwaway::stop(
            self.child.take(),
            &[
                (libc::SIGTERM, Duration::from_secs(60)),
                (libc::SIGKILL, Duration::from_secs(10)),
            ],
        );
    }

    /// mariadbd's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// How to connect: root, no password, on the private socket.
    pub fn target(&self) -> Target {
        Target::socket(self.socket())
    }

    /// Which asynchronous I/O InnoDB said it uses (its error log): "io_uring", "libaio",
    /// "none (falling back ...)".
    pub fn aio_in_use(&self) -> Option<String> {
        let log = read_log(&self.error_log());
        let mut found = None;
        for l in log.lines() {
            if l.contains("Using io_uring") {
                found = Some("io_uring".to_string());
            } else if l.contains("Using Linux native AIO") {
                found = Some("libaio (Linux native AIO)".to_string());
            } else if l.contains("falling back to innodb_use_native_aio=OFF") {
                found =
                    Some("none: native AIO failed, synchronous I/O in a thread pool".to_string());
            }
        }
        found
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        self.made.remove();
    }
}

/// A log in the server's directory, never through a link, and only a plain file with one
/// name (the directory belongs to the server's user).
fn open_log(path: &Path, append: bool) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(!append)
        .create(append)
        .append(append)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("cannot open", path, &e))?;
    let md = f
        .metadata()
        .map_err(|e| Error::io("cannot stat", path, &e))?;
    if !md.is_file() || md.nlink() != 1 {
        return Err(Error::other(format!(
            "{}: not the plain file a server's log should be; left alone",
            path.shown()
        )));
    }
    Ok(f)
}

/// A log's text (the last 256 KiB), or nothing.
fn read_log(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = open_log(path, false) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(256 << 10)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// What a log says went wrong: its last ERROR line, else its last lines, on one line.
fn log_reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if let Some(l) = lines
        .iter()
        .rev()
        .find(|l| l.contains("[ERROR]") && !l.contains("Aborting"))
    {
        return l.trim().to_string();
    }
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logs_reason_is_its_last_error_line() {
        let log = "2026 0 [Note] Starting\n2026 0 [ERROR] InnoDB: innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB current 5 MiB\n2026 0 [ERROR] Aborting\n";
        assert!(
            log_reason(log).ends_with("current 5 MiB"),
            "{}",
            log_reason(log)
        );
        assert_eq!(log_reason("a\nb\nc\nd\n"), "b / c / d");
    }

    #[test]
    fn a_users_setting_wins_over_dbios_own() {
        let s = own_settings(4);
        assert!(s.iter().any(|(n, v)| n == "max_connections" && v == "24"));
        assert!(
            s.iter()
                .any(|(n, v)| n == "performance_schema" && v == "ON")
        );
    }
}
