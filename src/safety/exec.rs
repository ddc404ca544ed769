//! Every program dbio starts — `mkfs.*`, `wipefs`, `dmsetup`, `ssh`, a throwaway server's
//! `initdb` and `postgres` — is a [`Program`], and a `Program` exists only once its file
//! was proved to be one no other user could have written (sudo's secure path, OpenSSH's
//! StrictModes): the file and every directory from `/` down to it belong to root or to the
//! user dbio runs as, and none is writable by group or other (no exception for sticky
//! directories such as `/tmp`); the file is a regular, executable file.
//!
//! The path is resolved here, one name at a time from `/`: each directory a name is looked
//! up in is checked before the name is, so a symbolic link counts only in a directory
//! nobody else can change, and a link's target is checked the same way. What is executed
//! is the path that was checked, with every link resolved: a link changed afterwards
//! changes nothing. A refusal is a usage error (exit 2) naming the path and why, given
//! before anything is started or created.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::units::Shown;

/// Where a bare name is looked for first, before `PATH` (as sudo's `secure_path`).
pub const SYSTEM_DIRS: &[&str] = &["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// How many symbolic links one path may go through (the kernel's limit).
const MAX_LINKS: u32 = 40;

/// A program dbio may start: its file, resolved and checked. The only way to get a
/// [`Command`] that runs it.
#[derive(Debug, Clone)]
pub struct Program {
    /// The checked path, every link resolved: what is executed.
    path: PathBuf,
    /// What the program is told its name is (`argv[0]`): the bare name it was found by
    /// (`mkfs.ext4`, a link to `mke2fs`, makes ext4 because of it), else `path`.
    arg0: OsString,
    /// The file's owner: root or the user dbio runs as.
    owner: u32,
}

impl Program {
    /// The program at `path` (absolute, or relative to the working directory); None when
    /// nothing is there. An error when it could have been written by another user.
    pub fn at(path: &Path) -> Result<Option<Program>> {
        let (path, owner) = match checked(path) {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(None),
            Err(why) => return Err(refusal(path, &why)),
        };
        Ok(Some(Program {
            arg0: path.clone().into_os_string(),
            path,
            owner,
        }))
    }

    /// The program called `name`, looked for in [`SYSTEM_DIRS`], then in the absolute
    /// directories of `PATH`; None when none has it. The first one found is the one: an
    /// error when another user could have written it (dbio does not go on looking).
    pub fn find(name: &str) -> Result<Option<Program>> {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return Err(Error::usage(format!(
                "'{}' is not a program's name",
                crate::units::shown(name)
            )));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = SYSTEM_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(std::env::split_paths(&path).filter(|d| d.is_absolute()));
        Program::find_in(name, dirs)
    }

    /// The program called `name` in the first of `dirs` that has one.
    fn find_in(name: &str, dirs: impl Iterator<Item = PathBuf>) -> Result<Option<Program>> {
        for dir in dirs {
            let candidate = dir.join(name);
            if !std::fs::metadata(&candidate).is_ok_and(|m| m.is_file()) {
                continue;
            }
            return Ok(Program::at(&candidate)?.map(|p| Program {
                arg0: OsString::from(name),
                ..p
            }));
        }
        Ok(None)
    }

    /// A command's first word as a shell takes it: a path when it holds a `/`, else a
    /// name looked up as [`Program::find`] does.
    pub fn resolve(word: &str) -> Result<Option<Program>> {
        if word.contains('/') {
            Program::at(Path::new(word))
        } else {
            Program::find(word)
        }
    }

    /// The checked path (every link resolved), which is what runs.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The user id owning the file (root or the user dbio runs as).
    pub fn owner(&self) -> u32 {
        self.owner
    }

    /// A command that runs this program: the checked path, with its name as `argv[0]`.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.path);
        c.arg0(&self.arg0);
        c
    }
}

/// The error for a program that is refused.
fn refusal(given: &Path, why: &str) -> Error {
    Error::usage(format!("cannot run {}: {why}", given.shown()))
}

/// `path` resolved from `/`, every directory on the way and the file itself checked:
/// the resolved path and the file's owner; None when nothing is there; else why not.
fn checked(path: &Path) -> std::result::Result<Option<(PathBuf, u32)>, String> {
    let me = crate::safety::fs::effective_uid();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        // getcwd: the physical directory, which is checked from `/` like the rest.
        std::env::current_dir()
            .map_err(|e| format!("the working directory cannot be read ({e})"))?
            .join(path)
    };
    let mut todo: VecDeque<OsString> = VecDeque::new();
    push_front(&mut todo, &absolute);
    let mut at = PathBuf::from("/");
    let root = std::fs::symlink_metadata(&at).map_err(|e| format!("/ cannot be read ({e})"))?;
    trusted(&at, &root, me)?;
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            // `at` is resolved, and each directory above it was checked on the way.
            at.pop();
            continue;
        }
        let next = at.join(&name);
        let md = match std::fs::symlink_metadata(&next) {
            Ok(md) => md,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                return Ok(None);
            }
            Err(e) => return Err(format!("{} cannot be checked ({e})", next.shown())),
        };
        if md.file_type().is_symlink() {
            // The directory holding the link is checked: nobody else can swap it.
            links += 1;
            if links > MAX_LINKS {
                return Err(format!(
                    "{} goes through more than {MAX_LINKS} symbolic links",
                    path.shown()
                ));
            }
            let target = std::fs::read_link(&next)
                .map_err(|e| format!("{} cannot be read ({e})", next.shown()))?;
            if target.is_absolute() {
                at = PathBuf::from("/");
            }
            push_front(&mut todo, &target);
            continue;
        }
        trusted(&next, &md, me)?;
        if todo.is_empty() {
            if !md.is_file() {
                return Err(format!("{} is not a regular file", next.shown()));
            }
            if md.mode() & 0o111 == 0 {
                return Err(format!("{} is not executable", next.shown()));
            }
            return Ok(Some((next, md.uid())));
        }
        if !md.is_dir() {
            return Ok(None);
        }
        at = next;
    }
    Err(format!("{} names a directory, not a program", path.shown()))
}

/// The names of `path` put in front of what is left to resolve (`.` left out).
fn push_front(todo: &mut VecDeque<OsString>, path: &Path) {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            Component::ParentDir => Some(OsStr::new("..")),
            _ => None,
        })
        .collect();
    for n in names.into_iter().rev() {
        todo.push_front(n.to_os_string());
    }
}

/// Why `path` (a directory on the way, or the program) could have been written by a user
/// other than root or `me`; Ok when it could not.
fn trusted(path: &Path, md: &std::fs::Metadata, me: u32) -> std::result::Result<(), String> {
    const TAIL: &str = "dbio runs no program another user could have replaced";
    let uid = md.uid();
    if uid != 0 && uid != me {
        let who = match user_name(uid) {
            Some(name) => format!("user {name} (uid {uid})"),
            None => format!("uid {uid}"),
        };
        return Err(format!(
            "{} belongs to {who}, not to root{}: {TAIL}",
            path.shown(),
            if me == 0 {
                String::new()
            } else {
                " or the user running dbio".into()
            }
        ));
    }
    let mode = md.mode() & 0o7777;
    let by = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "group and other",
        (true, false) => "group",
        (false, true) => "other",
        (false, false) => return Ok(()),
    };
    Err(format!(
        "{} is writable by {by} (mode {mode:04o}): {TAIL}",
        path.shown()
    ))
}

/// The name of user `uid`, from the password database.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to fill.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to live storage of the given size; the result points into
    // `pw` and `buf`, read before they go.
    unsafe {
        let rc = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found);
        if rc != 0 || found.is_null() || pw.pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pw.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A directory only root can change, to build trees in (a temporary directory in
    /// /tmp would be refused for /tmp itself): the first of these places that passes the
    /// checks. None where the tests do not run as root.
    fn base() -> Option<tempfile::TempDir> {
        if crate::safety::fs::effective_uid() != 0 {
            stderr_line!("skipped: needs root");
            return None;
        }
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        for parent in [target.as_path(), Path::new("/run"), Path::new("/var/lib")] {
            let Ok(d) = tempfile::Builder::new()
                .prefix("dbio-exec-test-")
                .tempdir_in(parent)
            else {
                continue;
            };
            std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let probe = d.path().join("probe");
            script(&probe, 0o755);
            let ok = checked(&probe).is_ok_and(|p| p.is_some());
            std::fs::remove_file(&probe).unwrap();
            if ok {
                return Some(d);
            }
        }
        panic!("no directory only root can change among {target:?}, /run, /var/lib");
    }

    fn script(path: &Path, mode: u32) {
        std::fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn refused(path: &Path) -> String {
        match Program::at(path) {
            Err(e) => {
                assert_eq!(e.exit_code(), crate::error::ExitCode::Usage);
                e.to_string()
            }
            Ok(p) => panic!("{} was accepted: {p:?}", path.display()),
        }
    }

    #[test]
    fn a_system_program_is_found_and_runs_by_its_checked_path() {
        let sh = Program::find("sh").unwrap().expect("sh");
        assert!(sh.path().is_absolute());
        assert_eq!(sh.path(), std::fs::canonicalize(sh.path()).unwrap());
        assert!(
            sh.command()
                .arg("-c")
                .arg("exit 0")
                .status()
                .unwrap()
                .success()
        );
        assert!(Program::find("no-such-program-here").unwrap().is_none());
        assert!(Program::find("../sh").is_err());
        assert!(Program::at(Path::new("/no/such/dir/x")).unwrap().is_none());
    }

    #[test]
    fn a_bare_name_keeps_its_name_as_argv0() {
        let Some(d) = base() else { return };
        // A shell (a program that says its argv[0]) under a name, and a link to it.
        let real = d.path().join("multi");
        let sh = Program::find("sh").unwrap().expect("sh");
        std::fs::copy(sh.path(), &real).unwrap();
        mode(&real, 0o755);
        let link = d.path().join("alias");
        std::os::unix::fs::symlink("multi", &link).unwrap();
        let p = Program::at(&link).unwrap().unwrap();
        assert_eq!(p.path(), real);
        let said = |p: &Program| {
            let out = p.command().args(["-c", "echo $0"]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        // Given by path: the checked path is its name.
        assert_eq!(said(&p), real.display().to_string());
        // Found by name: that name, though the resolved file runs.
        let dirs = [PathBuf::from("/nonexistent"), d.path().to_path_buf()];
        let named = Program::find_in("alias", dirs.into_iter())
            .unwrap()
            .unwrap();
        assert_eq!(named.path(), real);
        assert_eq!(said(&named), "alias");
        // The first directory that has it is the one, even when it is refused.
        mode(d.path(), 0o777);
        let dirs = [d.path().to_path_buf(), PathBuf::from("/usr/bin")];
        assert!(Program::find_in("sh", dirs.clone().into_iter()).is_ok());
        std::fs::copy(sh.path(), d.path().join("sh")).unwrap();
        assert!(Program::find_in("sh", dirs.into_iter()).is_err());
        mode(d.path(), 0o755);
    }

    #[test]
    fn group_or_other_write_anywhere_on_the_way_is_refused_and_named() {
        let Some(d) = base() else { return };
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let prog = bin.join("prog");
        script(&prog, 0o755);
        assert!(Program::at(&prog).unwrap().is_some());

        mode(&bin, 0o777);
        let e = refused(&prog);
        assert!(
            e.contains(&format!(
                "{} is writable by group and other (mode 0777)",
                bin.display()
            )),
            "{e}"
        );
        // Sticky is no excuse (/tmp is refused too).
        mode(&bin, 0o1777);
        assert!(refused(&prog).contains("(mode 1777)"));
        mode(&bin, 0o775);
        assert!(refused(&prog).contains("writable by group (mode 0775)"));
        mode(&bin, 0o755);

        mode(&prog, 0o757);
        assert!(refused(&prog).contains(&format!("{} is writable by other", prog.display())));
        mode(&prog, 0o644);
        assert!(refused(&prog).contains("is not executable"));
        mode(&prog, 0o755);

        // A writable parent of the directory.
        mode(d.path(), 0o777);
        let e = refused(&prog);
        assert!(
            e.contains(&format!("{} is writable", d.path().display())),
            "{e}"
        );
        mode(d.path(), 0o755);
        // Relative to the working directory: the same checks from `/`.
        let cwd = std::env::current_dir().unwrap();
        if let Ok(relative) = prog.strip_prefix(&cwd) {
            let p = Program::at(relative).unwrap().unwrap();
            assert_eq!(p.path(), prog);
            mode(&bin, 0o777);
            assert!(refused(relative).contains(&format!("{} is writable", bin.display())));
            mode(&bin, 0o755);
        }
        assert!(refused(Path::new("/tmp/../tmp/x")).contains("/tmp is writable"));
    }

    #[test]
    fn a_file_or_directory_of_another_user_is_refused_and_named() {
        let Some(d) = base() else { return };
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let prog = bin.join("prog");
        script(&prog, 0o755);
        std::os::unix::fs::chown(&prog, Some(65534), None).unwrap();
        let e = refused(&prog);
        assert!(
            e.contains(&format!("{} belongs to", prog.display())) && e.contains("uid 65534"),
            "{e}"
        );
        std::os::unix::fs::chown(&prog, Some(0), None).unwrap();
        std::os::unix::fs::chown(&bin, Some(65534), None).unwrap();
        let e = refused(&prog);
        assert!(e.contains(&format!("{} belongs to", bin.display())), "{e}");
        // A group other than root's is fine while it cannot write.
        std::os::unix::fs::chown(&bin, Some(0), Some(65534)).unwrap();
        assert!(Program::at(&prog).unwrap().is_some());
    }

    #[test]
    fn links_run_what_was_checked_and_count_only_in_safe_directories() {
        let Some(d) = base() else { return };
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        script(&real.join("prog"), 0o755);
        // A link farm in a safe directory to a safe program: its resolved path runs.
        let farm = d.path().join("farm");
        std::fs::create_dir(&farm).unwrap();
        std::os::unix::fs::symlink(real.join("prog"), farm.join("prog")).unwrap();
        let p = Program::at(&farm.join("prog")).unwrap().unwrap();
        assert_eq!(p.path(), real.join("prog"));
        // A directory link, a relative link with `..` through it.
        std::os::unix::fs::symlink("real", d.path().join("dirlink")).unwrap();
        let p = Program::at(&d.path().join("dirlink/../real/prog"))
            .unwrap()
            .unwrap();
        assert_eq!(p.path(), real.join("prog"));

        // The same link, in a directory another user may write: refused, naming it.
        mode(&farm, 0o777);
        let e = refused(&farm.join("prog"));
        assert!(
            e.contains(&format!("{} is writable", farm.display())),
            "{e}"
        );
        mode(&farm, 0o755);
        // A link from a safe place into an unsafe one: the target's directory is named.
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        script(&open.join("prog"), 0o755);
        mode(&open, 0o777);
        std::os::unix::fs::symlink(open.join("prog"), farm.join("evil")).unwrap();
        let e = refused(&farm.join("evil"));
        assert!(
            e.contains(&format!("{} is writable", open.display())),
            "{e}"
        );
        // A link to /tmp.
        std::os::unix::fs::symlink("/tmp", farm.join("tmp")).unwrap();
        assert!(refused(&farm.join("tmp/x")).contains("/tmp is writable"));
        // A loop of links.
        std::os::unix::fs::symlink("loop2", farm.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", farm.join("loop2")).unwrap();
        assert!(refused(&farm.join("loop1")).contains("symbolic links"));
    }
}
