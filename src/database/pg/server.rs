//! A throwaway PostgreSQL server (`--pg-bin DIR`): `initdb` in the run directory as an
//! unprivileged user, listening on a private Unix socket only, with settings for a
//! measurement, stopped (fast shutdown) and removed at the end — on errors and on signals
//! too. The postmaster is dbio's own child in a session of its own (a Ctrl-C on the
//! terminal reaches dbio, which stops it in order), and it is told to shut down should
//! dbio die (parent-death signal), so it never outlives dbio.

use std::ffi::CString;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use postgres::Config;

use crate::error::{Error, Result};
use crate::safety::cleanup::{Leftover, PG_DATA_DIR, PG_SOCKET_DIR, Recorded};
use crate::safety::exec::Program;
use crate::units::Shown;

/// The socket's port number (it only names the socket file in a private directory).
const PORT: u16 = 5432;
/// The role initdb makes, which dbio connects as.
const ROLE: &str = "dbio";

/// The user name of the current user (for libpq's default user).
pub fn login_name() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage or NULL; read at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr((*pw).pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// The system user throwaway servers run as when dbio runs as root: one that owns nothing
/// else on the host (never `postgres`, who owns the host's real clusters, nor `nobody`,
/// whom many daemons share). The packages create it; dbio does not.
pub const SERVER_USER: &str = "dbio";

/// The command that creates [`SERVER_USER`] (what the packages run).
pub const CREATE_SERVER_USER: &str = "useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group dbio";

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

/// Who runs the server: dbio's own user, or [`SERVER_USER`] when dbio runs as root
/// (initdb and postgres refuse root).
#[derive(Debug, Clone)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Drop to `uid`/`gid` in the child (dbio is root).
    pub drop: bool,
}

impl RunAs {
    fn find(bins: &Binaries) -> Result<RunAs> {
        let me = crate::safety::fs::effective_uid();
        if me != 0 {
            // SAFETY: getegid cannot fail.
            let gid = unsafe { libc::getegid() };
            return Ok(RunAs {
                name: login_name().unwrap_or_else(|| me.to_string()),
                uid: me,
                gid,
                drop: false,
            });
        }
        let c = CString::new(SERVER_USER).expect("no NUL");
        // SAFETY: getpwnam returns static storage or NULL; read at once.
        let found = unsafe {
            let pw = libc::getpwnam(c.as_ptr());
            (!pw.is_null()).then(|| ((*pw).pw_uid, (*pw).pw_gid))
        };
        let Some((uid, gid)) = found else {
            return Err(Error::usage(format!(
                "--pg-bin: dbio runs as root, and the throwaway server runs as the system user {SERVER_USER}, which does not exist; create it (dbio's packages do): {CREATE_SERVER_USER}"
            )));
        };
        let refuse = |why: String| {
            Err(Error::usage(format!(
                "--pg-bin: user {SERVER_USER} (uid {uid}) {why}: the throwaway server runs as a user that owns nothing else on this host; leave user {SERVER_USER} to dbio alone"
            )))
        };
        if uid == 0 || gid == 0 {
            return refuse(format!("has uid {uid} and group id {gid}, root's"));
        }
        for p in [&bins.initdb, &bins.postgres] {
            if p.owner() == uid {
                return refuse(format!("owns {}", p.path().shown()));
            }
        }
        if let Some(process) = foreign_process(uid) {
            return refuse(format!("runs {process}, which no dbio started (stop it)"));
        }
        Ok(RunAs {
            name: SERVER_USER.into(),
            uid,
            gid,
            drop: true,
        })
    }

    /// Makes `cmd` run as this user, in a session of its own, and (for the postmaster) told
    /// to shut down fast when dbio dies.
    fn apply(&self, cmd: &mut Command, die_with_parent: bool) {
        let (uid, gid, drop) = (self.uid, self.gid, self.drop);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if drop
                    && (libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                // After the change of user, which clears it.
                if die_with_parent
                    && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT as libc::c_ulong) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// A process of user `uid` that is not a throwaway server of a dbio: one whose line of
/// parents, through processes of `uid`, does not lead to a process running this very dbio
/// binary (the dbio that started it) or another dbio of root's or this user's. "process 12
/// (sleep 100)".
fn foreign_process(uid: u32) -> Option<String> {
    /// Its parent, whether any of its user ids (real, effective, saved, file system) is
    /// `uid`, and whether it has ended (a zombie runs nothing), from /proc/PID/status.
    fn status(pid: u32, uid: u32) -> Option<(u32, bool, bool)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        };
        let ppid = field("PPid:")?.first()?.parse().ok()?;
        let ids = field("Uid:")?;
        let ended = field("State:")?.first()? == "Z";
        Some((ppid, ids.iter().any(|i| i.parse() == Ok(uid)), ended))
    }
    fn exe(pid: &str) -> Option<(u64, u64)> {
        let md = std::fs::metadata(format!("/proc/{pid}/exe")).ok()?;
        Some((md.dev(), md.ino()))
    }
    /// A dbio (another build or version of it: a test suite's, a second install) run by
    /// root or by this user: only they can have started processes of `uid`, so what it
    /// started is a throwaway server too, not another service's.
    fn another_dbio(pid: u32) -> bool {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let owner = std::fs::metadata(format!("/proc/{pid}")).map(|m| m.uid());
        comm.trim() == "dbio"
            && owner.is_ok_and(|o| o == 0 || o == crate::safety::fs::effective_uid())
    }
    let me = exe("self");
    let procs = std::fs::read_dir("/proc").ok()?;
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some((mut up, true, false)) = status(pid, uid) else {
            continue;
        };
        let mut ours = false;
        for _ in 0..64 {
            match status(up, uid) {
                Some((parent, true, _)) if up > 1 => up = parent,
                Some((_, false, _)) => {
                    ours = (me.is_some() && exe(&up.to_string()) == me) || another_dbio(up);
                    break;
                }
                _ => break,
            }
        }
        if !ours {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd: String = String::from_utf8_lossy(&cmd[..cmd.len().min(512)])
                .trim_end_matches('\0')
                .replace('\0', " ");
            return Some(format!(
                "process {pid} ({})",
                crate::safety::lock::printable(&cmd)
            ));
        }
    }
    None
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

/// Whether user `who` may enter every directory from `/` down to `dir` (the server's files
/// live below it).
pub fn reachable_by(who: &RunAs, dir: &Path) -> std::result::Result<(), PathBuf> {
    if !who.drop {
        return Ok(());
    }
    let mut p = PathBuf::from("/");
    for c in dir.components().skip(1) {
        p.push(c);
        let Ok(md) = std::fs::metadata(&p) else {
            return Ok(()); // made later, by dbio (mode 0755)
        };
        let mode = md.mode();
        let ok = if md.uid() == who.uid {
            mode & 0o100 != 0
        } else if md.gid() == who.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            return Err(p);
        }
    }
    Ok(())
}

/// The user the server will run as (checked before anything is created).
pub fn run_as(bins: &Binaries) -> Result<RunAs> {
    RunAs::find(bins)
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
    /// The records of `dir` and `sock` as leftovers, made before each directory was.
    records: Vec<(PathBuf, Recorded)>,
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
        let dir_record = Recorded::note(&dir_leftover(PG_DATA_DIR, dir, &who, None));
        if let Err(e) = std::fs::create_dir(dir) {
            dir_record.undone();
            return Err(Error::io("cannot create", dir, &e));
        }
        dir_record.update(&dir_leftover(PG_DATA_DIR, dir, &who, identity(dir)));
        let (sock, sock_record) = match make_socket_dir(&who) {
            Ok(s) => s,
            Err(e) => {
                if std::fs::remove_dir_all(dir).is_ok() {
                    dir_record.undone();
                }
                return Err(e);
            }
        };
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
            records: Vec::new(),
        };
        s.records.push((s.dir.clone(), dir_record));
        s.records.push((s.sock.clone(), sock_record));
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
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| Error::io("cannot open", &self.log(), &e))?,
            )
            .stderr(log);
        self.who.apply(&mut cmd, false);
        let status = cmd
            .status()
            .map_err(|e| Error::other(format!("--pg-bin: cannot run initdb: {e}")))?;
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
        cmd.env("LC_ALL", "C")
            .stdin(Stdio::null())
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
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id() as libc::pid_t;
        for (sig, wait) in [
            (libc::SIGINT, Duration::from_secs(30)),
            (libc::SIGQUIT, Duration::from_secs(10)),
            (libc::SIGKILL, Duration::from_secs(10)),
        ] {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(pid, sig) };
            let until = Instant::now() + wait;
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
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
        for (path, record) in self.records.drain(..) {
            match std::fs::remove_dir_all(&path) {
                Ok(()) => record.undone(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => record.undone(),
                Err(_) => {}
            }
        }
    }
}

/// The leftover record of a throwaway server's directory `path` (of `kind`), owned by the
/// server's user; `id`: its device and inode once made.
fn dir_leftover(kind: &'static str, path: &Path, who: &RunAs, id: Option<(u64, u64)>) -> Leftover {
    Leftover::directory(kind, path, who.uid, id)
}

/// The device and inode of the directory at `path`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
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

/// `/tmp/dbio-pg-XXXXXX` (a new, random name), mode 0700, owned by the server's user; noted
/// as a leftover before it is made.
fn make_socket_dir(who: &RunAs) -> Result<(PathBuf, Recorded)> {
    use std::os::unix::fs::DirBuilderExt;
    let mut last = None;
    for _ in 0..32 {
        let name: String = (0..6).map(|_| fastrand::alphanumeric()).collect();
        let path = PathBuf::from(format!("/tmp/dbio-pg-{name}"));
        let record = Recorded::note(&dir_leftover(PG_SOCKET_DIR, &path, who, None));
        // mkdir never follows a link, and fails if anything is at the name.
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) => {
                record.undone();
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    last = Some(e);
                    continue;
                }
                return Err(Error::other(format!(
                    "--pg-bin: cannot create a socket directory in /tmp: {e}"
                )));
            }
        }
        record.update(&dir_leftover(PG_SOCKET_DIR, &path, who, identity(&path)));
        if let Err(e) = hand_over_dir(&path, who) {
            if std::fs::remove_dir(&path).is_ok() {
                record.undone();
            }
            return Err(e);
        }
        return Ok((path, record));
    }
    Err(Error::other(format!(
        "--pg-bin: cannot create a socket directory in /tmp: {}",
        last.map_or_else(|| "no free name".into(), |e| e.to_string())
    )))
}

/// Makes the directory dbio just created at `path` private (0700) and the server's user's,
/// through a descriptor opened without following a link: what is changed is that directory.
fn hand_over_dir(path: &Path, who: &RunAs) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("cannot open", path, &e))?;
    dir.set_permissions(std::fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io("cannot set the mode of", path, &e))?;
    if who.drop {
        std::os::unix::fs::fchown(&dir, Some(who.uid), Some(who.gid))
            .map_err(|e| Error::io("cannot hand over", path, &e))?;
    }
    Ok(())
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

    /// The processes whose user ids include `uid`.
    fn processes_of(uid: u32) -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|t| {
                    t.lines()
                        .find_map(|l| l.strip_prefix("Uid:"))
                        .is_some_and(|ids| ids.split_whitespace().any(|i| i == uid.to_string()))
                })
            })
            .collect()
    }

    fn wait_for_processes_of(uid: u32, n: usize) {
        let until = Instant::now() + Duration::from_secs(20);
        while processes_of(uid).len() < n {
            assert!(Instant::now() < until, "no process of uid {uid} started");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_process_of_the_servers_user_that_this_dbio_did_not_start_is_foreign() {
        if crate::safety::fs::effective_uid() != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        // User ids nobody uses (no passwd entry needed to run as one).
        let base = 3_000_000 + std::process::id() % 100_000 * 4;
        let (ours, foreign) = (base, base + 1);
        assert_eq!(foreign_process(ours), None);
        let sh = Program::find("sh").unwrap().expect("sh");
        // Started by this binary (here the test binary plays dbio): a shell and its child,
        // as a throwaway server and its backends are.
        let mut cmd = sh.command();
        cmd.args(["-c", "sleep 60 & wait"]);
        RunAs {
            name: "x".into(),
            uid: ours,
            gid: ours,
            drop: true,
        }
        .apply(&mut cmd, true);
        let mut child = cmd.spawn().unwrap();
        wait_for_processes_of(ours, 2);
        assert_eq!(foreign_process(ours), None);
        // Started by another program (a root shell): someone else uses that user.
        let setpriv = Program::find("setpriv").unwrap();
        let Some(setpriv) = setpriv else {
            eprintln!("skipped: no setpriv");
            for p in processes_of(ours) {
                // SAFETY: processes this test started, under a user id only it uses.
                unsafe { libc::kill(p as i32, libc::SIGKILL) };
            }
            let _ = child.wait();
            return;
        };
        let mut other = sh.command();
        other.arg("-c").arg(format!(
            "{} --reuid={foreign} --regid={foreign} --clear-groups sleep 60 & wait",
            setpriv.path().display()
        ));
        let mut other = other.spawn().unwrap();
        wait_for_processes_of(foreign, 1);
        let found = foreign_process(foreign);
        let pid = processes_of(foreign)[0];
        for p in processes_of(ours).into_iter().chain(processes_of(foreign)) {
            // SAFETY: processes this test started, under user ids only it uses.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        let _ = child.wait();
        let _ = other.wait();
        // (Named by its command line: sleep's, or setpriv's a moment before it ran sleep.)
        let found = found.expect("a foreign process");
        assert!(found.starts_with(&format!("process {pid} (")), "{found}");
    }

    #[test]
    fn the_logs_reason_is_its_last_fatal_line() {
        let log = "Success. You can now start the database server\n\n2026 GMT [1] FATAL:  unrecognized configuration parameter \"io_method\"\n2026 GMT [1] LOG:  database system is shut down\n";
        assert!(log_reason(log).ends_with("unrecognized configuration parameter \"io_method\""));
        assert_eq!(log_reason("a\nb\nc\nd\n"), "b / c / d");
    }
}
