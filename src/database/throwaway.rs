//! What every throwaway database server shares, whatever the database: who runs it (dbio's
//! own user, or the system user [`SERVER_USER`] when dbio runs as root, refused while a
//! process dbio did not start runs as that user), whether that user may reach the run
//! directory, and its private directories (made by dbio, noted as leftovers before they
//! are made, handed over through a descriptor that follows no link). `dbio pg` and `dbio
//! mysql` start their servers with these.

use std::ffi::CString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::safety::cleanup::{DirectoryDetail, Leftover, Recorded};
use crate::safety::exec::Program;
use crate::units::Shown;

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

/// Who runs the server: dbio's own user, or [`SERVER_USER`] when dbio runs as root
/// (database servers refuse to run as root).
#[derive(Debug, Clone)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Drop to `uid`/`gid` in the child (dbio is root).
    pub drop: bool,
}

impl RunAs {
    /// Who runs a throwaway server started from `programs` (given with `option`).
    pub fn find(option: &str, programs: &[&Program]) -> Result<RunAs> {
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
                "{option}: dbio runs as root, and the throwaway server runs as the system user {SERVER_USER}, which does not exist; create it (dbio's packages do): {CREATE_SERVER_USER}"
            )));
        };
        let refuse = |why: String| {
            Err(Error::usage(format!(
                "{option}: user {SERVER_USER} (uid {uid}) {why}: the throwaway server runs as a user that owns nothing else on this host; leave user {SERVER_USER} to dbio alone"
            )))
        };
        if uid == 0 || gid == 0 {
            return refuse(format!("has uid {uid} and group id {gid}, root's"));
        }
        for p in programs {
            if p.owner() == uid {
                return refuse(format!("owns {}", p.path().shown()));
            }
        }
        // A killed dbio's throwaway server shuts itself down (it was told to when dbio
        // died) within seconds: one seen now may be that, so it is given a moment to end.
        let deadline = std::time::Instant::now() + FOREIGN_GRACE;
        while let Some(process) = foreign_process(uid) {
            if std::time::Instant::now() >= deadline {
                return refuse(format!(
                    "runs {process}, which no running dbio started, for over {} s: a server a killed dbio run left is named by `dbio doctor` and stopped by `dbio clean --stale`; anything else, stop it",
                    FOREIGN_GRACE.as_secs()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Ok(RunAs {
            name: SERVER_USER.into(),
            uid,
            gid,
            drop: true,
        })
    }

    /// Makes `cmd` run as this user, in a session of its own, with an environment of its
    /// own, and (for the postmaster) told to shut down fast when dbio dies. Nothing of the
    /// caller's environment (LD_PRELOAD, LD_LIBRARY_PATH, PGOPTIONS, PGDATA, a password, a
    /// locale) reaches a program running as the server's user: only `PATH`
    /// ([`SERVER_PATH`]) and `LC_ALL=C`.
    pub fn apply(&self, cmd: &mut Command, die_with_parent: bool) {
        self.apply_with(cmd, die_with_parent.then_some(libc::SIGINT));
    }

    /// [`RunAs::apply`], the server told `die_signal` (its own fast shutdown's) when dbio
    /// dies.
    pub fn apply_with(&self, cmd: &mut Command, die_signal: Option<libc::c_int>) {
        cmd.env_clear().env("PATH", SERVER_PATH).env("LC_ALL", "C");
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
                if let Some(sig) = die_signal
                    && libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// An error when dbio was told to stop (Ctrl-C, SIGTERM, SIGHUP) while a throwaway server
/// was being made or started (`what`): every wait of a server's setup and start asks this
/// between its short steps, so a signal is honoured at once.
pub fn heard_stop(what: &str) -> Result<()> {
    if crate::store::stopped() {
        return Err(Error::Interrupted(format!(
            "interrupted while {what}; nothing measured"
        )));
    }
    Ok(())
}

/// The programs' PATH in a throwaway server's environment (mariadb-install-db is a shell
/// script that runs a few tools).
const SERVER_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// Runs a setup program of a throwaway server (initdb, mariadb-install-db; made to run in a
/// session of its own by [`RunAs::apply`]) to its end, asking [`heard_stop`] every 20 ms:
/// on a signal the program's whole session is killed and reaped, and the error says so
/// (the caller removes what was made). `option` (`--pg-bin`) begins any other error.
pub fn run_setup(cmd: &mut Command, option: &str, what: &str) -> Result<std::process::ExitStatus> {
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::other(format!("{option}: cannot run {what}: {e}")))?;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(e) => {
                return Err(Error::other(format!(
                    "{option}: cannot wait for {what}: {e}"
                )));
            }
        }
        if let Err(e) = heard_stop(&format!("{what} ran")) {
            // SAFETY: signalling the session of our own child, which has not been reaped.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            return Err(e);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long a process of the server user that no running dbio started may take to end
/// before a throwaway server is refused: a killed run's server stops itself in that time.
const FOREIGN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Stops a throwaway server dbio started (if it still holds one): each signal of `ladder`
/// in turn (its own shutdowns, gentlest first, then SIGKILL), waiting up to that step's
/// time for the server to exit, which it reaps.
pub fn stop(child: Option<std::process::Child>, ladder: &[(libc::c_int, std::time::Duration)]) {
    let Some(mut child) = child else {
        return;
    };
    let pid = child.id() as libc::pid_t;
    for &(sig, wait) in ladder {
        // SAFETY: signalling our own child, which has not been reaped.
        unsafe { libc::kill(pid, sig) };
        let until = std::time::Instant::now() + wait;
        while std::time::Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Stops the server a killed run left, process `pid` (read from its pid file), if it still
/// runs as `uid` with `dir` on its command line: checked again before each signal of
/// `ladder` (gentlest first, then SIGKILL), each given its time. Why not, naming `program`
/// (`postgres`, `mariadbd`), else.
pub fn stop_left_server(
    pid: u32,
    uid: u32,
    dir: &Path,
    program: &str,
    ladder: &[(libc::c_int, std::time::Duration)],
) -> std::result::Result<(), String> {
    let runs_here = || {
        let Ok(md) = std::fs::metadata(format!("/proc/{pid}")) else {
            return false;
        };
        crate::sys::process_identity(pid).is_some()
            && md.uid() == uid
            && crate::safety::lock::cmdline(pid).contains(&dir.display().to_string())
    };
    for &(sig, wait) in ladder {
        if !runs_here() {
            return Ok(());
        }
        // SAFETY: a signal to the server just identified (its user and directory).
        unsafe { libc::kill(pid as libc::pid_t, sig) };
        let until = std::time::Instant::now() + wait;
        while std::time::Instant::now() < until {
            if !runs_here() {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    Err(format!(
        "the {program} still running from it (pid {pid}) did not stop"
    ))
}

/// A process of user `uid` that is not a throwaway server of a dbio: one whose line of
/// parents, through processes of `uid`, does not lead to a process running this very dbio
/// binary (the dbio that started it) or another dbio of root's or this user's. "process 12
/// (sleep 100)".
pub fn foreign_process(uid: u32) -> Option<String> {
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

/// The leftover record of a throwaway server's directory `path` (of `kind`), owned by the
/// server's user; `id`: its device and inode once made.
pub fn dir_leftover(
    kind: &'static str,
    path: &Path,
    who: &RunAs,
    id: Option<(u64, u64)>,
) -> Leftover {
    Leftover::directory(kind, path, who.uid, id)
}

/// Makes a throwaway server's directory `dir` (which must not exist; leftover kind `kind`)
/// and its private socket directory (`/tmp/dbio-<db>-...`, kind `sock_kind`), each noted
/// as a leftover before it is made; on failure neither is left. Returns the socket
/// directory and the records of `dir` and of it.
pub fn make_server_dirs(
    who: &RunAs,
    dir: &Path,
    kind: &'static str,
    db: &str,
    sock_kind: &'static str,
    option: &str,
) -> Result<(PathBuf, Recorded, Recorded)> {
    let dir_record = Recorded::note(&dir_leftover(kind, dir, who, None));
    if let Err(e) = std::fs::create_dir(dir) {
        dir_record.undone();
        return Err(Error::io("cannot create", dir, &e));
    }
    dir_record.update(&dir_leftover(kind, dir, who, identity(dir)));
    match make_socket_dir(who, db, sock_kind, option) {
        Ok((sock, sock_record)) => Ok((sock, dir_record, sock_record)),
        Err(e) => {
            if std::fs::remove_dir_all(dir).is_ok() {
                dir_record.undone();
            }
            Err(e)
        }
    }
}

/// The directories a throwaway server was given (its own and its socket's), each with the
/// identity it had when made and its leftover record: removed when the server is dropped,
/// only while each is still the directory dbio made; one that is not (or cannot be
/// removed) stays noted, and `dbio doctor` names it.
#[derive(Default)]
pub struct MadeDirs(Vec<(PathBuf, Option<Identity>, Recorded)>);

/// A directory's device and inode.
type Identity = (u64, u64);

impl MadeDirs {
    /// `path`, just made by dbio, noted by `record`.
    pub fn push(&mut self, path: &Path, record: Recorded) {
        self.0.push((path.to_path_buf(), identity(path), record));
    }

    /// Removes each directory that is still the one made (a missing one is gone already).
    pub fn remove(&mut self) {
        for (path, made, record) in self.0.drain(..) {
            match identity(&path) {
                None => record.undone(),
                Some(now) if Some(now) == made => {
                    if std::fs::remove_dir_all(&path).is_ok() {
                        record.undone();
                    }
                }
                Some(_) => {}
            }
        }
    }
}

/// The device and inode of the directory at `path`.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// `/tmp/dbio-<db>-XXXXXX` (a new, random name; `db` is `pg`, `mysql`), mode 0700, owned by
/// the server's user; noted as a leftover of `kind` before it is made. `option` names the
/// option that asked for the server, in messages.
pub fn make_socket_dir(
    who: &RunAs,
    db: &str,
    kind: &'static str,
    option: &str,
) -> Result<(PathBuf, Recorded)> {
    use std::os::unix::fs::DirBuilderExt;
    let mut last = None;
    for _ in 0..32 {
        let name: String = (0..6).map(|_| fastrand::alphanumeric()).collect();
        let path = PathBuf::from(format!("/tmp/dbio-{db}-{name}"));
        let record = Recorded::note(&dir_leftover(kind, &path, who, None));
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
                    "{option}: cannot create a socket directory in /tmp: {e}"
                )));
            }
        }
        record.update(&dir_leftover(kind, &path, who, identity(&path)));
        if let Err(e) = hand_over_dir(&path, who) {
            if std::fs::remove_dir(&path).is_ok() {
                record.undone();
            }
            return Err(e);
        }
        return Ok((path, record));
    }
    Err(Error::other(format!(
        "{option}: cannot create a socket directory in /tmp: {}",
        last.map_or_else(|| "no free name".into(), |e| e.to_string())
    )))
}

/// Makes the directory dbio just created at `path` private (0700) and the server's user's,
/// through a descriptor opened without following a link: what is changed is that directory.
pub fn hand_over_dir(path: &Path, who: &RunAs) -> Result<()> {
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

/// Removes a throwaway server's directory (`what`, in words) if it is still the one dbio
/// made: a plain directory (no link) with the recorded device and inode, owned by the
/// server's user or by dbio's, holding only what `server_file` says a server puts there.
/// `stop` stops a server still running from it first.
pub fn remove_server_dir(
    d: &DirectoryDetail,
    server_file: &dyn Fn(&str, &std::fs::Metadata) -> bool,
    stop: &dyn Fn() -> Result<(), String>,
    what: &str,
) -> Result<String, String> {
    let shown = d.path.shown().to_string();
    let md = match std::fs::symlink_metadata(&d.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!("{shown} is gone already"));
        }
        Err(e) => return Err(format!("cannot look at it: {e}")),
    };
    if !md.is_dir() {
        return Err("it is not a directory (a link, or a file): not dbio's".into());
    }
    if let (Some(dev), Some(ino)) = (d.dev, d.ino)
        && (md.dev() != dev || md.ino() != ino)
    {
        return Err("it is another directory than the one dbio made (its inode differs)".into());
    }
    let me = crate::safety::fs::effective_uid();
    if md.uid() != d.uid && md.uid() != me {
        return Err(format!(
            "it belongs to uid {}, neither the server's user nor dbio's",
            md.uid()
        ));
    }
    let entries = std::fs::read_dir(&d.path).map_err(|e| format!("cannot read it: {e}"))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot read it: {e}"))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let emd = e
            .metadata()
            .map_err(|err| format!("cannot look at {name}: {err}"))?;
        if !server_file(&name, &emd) {
            return Err(format!(
                "it holds {} which a throwaway server does not make: left alone",
                crate::units::shown(&name)
            ));
        }
    }
    stop()?;
    // The directory's identity and contents were checked just above; remove_dir_all does
    // not follow links inside it.
    std::fs::remove_dir_all(&d.path).map_err(|e| format!("cannot remove it: {e}"))?;
    Ok(format!("removed {what} {shown}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A server's directory swapped for another one (same name) after it was made is left,
    /// with the file in it; the one still as made is removed; a missing one is no error.
    #[test]
    fn only_the_directories_still_as_made_are_removed() {
        let base = std::env::temp_dir().join(format!("dbio-made-{}", std::process::id()));
        let (kept, swapped, gone) = (base.join("kept"), base.join("swapped"), base.join("gone"));
        for d in [&kept, &swapped, &gone] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut made = MadeDirs::default();
        for d in [&kept, &swapped, &gone] {
            made.push(d, Recorded::note(&dir_leftover("test dir", d, &me(), None)));
        }
        // Moved aside, so that the new one cannot reuse its inode.
        std::fs::rename(&swapped, base.join("moved")).unwrap();
        std::fs::create_dir(&swapped).unwrap();
        std::fs::write(swapped.join("foreign"), b"not dbio's").unwrap();
        std::fs::remove_dir(&gone).unwrap();
        made.remove();
        assert!(!kept.exists());
        assert_eq!(
            std::fs::read(swapped.join("foreign")).unwrap(),
            b"not dbio's"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    fn me() -> RunAs {
        RunAs {
            name: "me".into(),
            uid: crate::safety::fs::effective_uid(),
            gid: 0,
            drop: false,
        }
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
            stderr_line!("skipped: needs root");
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
            stderr_line!("skipped: no setpriv");
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
}
