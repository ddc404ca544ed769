//! What `dbio --version` and result.json say about the binary itself: the git commit it
//! was built from ("unknown" outside a checkout, e.g. from a source tarball), the target,
//! and the oldest glibc it runs on. Runs nothing but git, and needs no C compiler.
//!
//! The glibc floor: `DBIO_GLIBC_FLOOR` when set (dist/build sets it for the portable build,
//! whose link uses an older glibc than the build host's); else, for a native build on a
//! glibc target, the build host's glibc, which the binary is linked against; else none.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DBIO_GLIBC_FLOOR");

    let commit = git(&["rev-parse", "--short=7", "HEAD"]).unwrap_or_else(|| "unknown".into());
    if commit != "unknown" {
        // A new commit or a branch switch changes the answer.
        for path in ["HEAD", "packed-refs"] {
            rerun_on_git_path(path);
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            rerun_on_git_path(&r);
        }
    }

    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let floor = match std::env::var("DBIO_GLIBC_FLOOR") {
        Ok(v) if !v.is_empty() => {
            let ok = v.split('.').count() == 2
                && v.split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            assert!(ok, "DBIO_GLIBC_FLOOR={v}: a glibc version, e.g. 2.17");
            v
        }
        _ if target_env == "gnu" && target == host => host_glibc().unwrap_or_default(),
        _ => String::new(),
    };

    // "x86_64-unknown-linux-gnu" reads "x86_64-linux-gnu", as the distributions name it.
    let short = target.replace("-unknown-", "-");
    let glibc = if floor.is_empty() {
        String::new()
    } else {
        format!(", glibc >= {floor}")
    };
    let long = format!(
        "{} (commit {commit}, {short}{glibc})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    println!("cargo:rustc-env=DBIO_COMMIT={commit}");
    println!("cargo:rustc-env=DBIO_TARGET={target}");
    println!("cargo:rustc-env=DBIO_GLIBC_FLOOR={floor}");
    println!("cargo:rustc-env=DBIO_LONG_VERSION={long}");
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// Cargo reruns a build script every time a file it watches is missing: only files there.
fn rerun_on_git_path(path: &str) {
    if let Some(p) = git(&["rev-parse", "--git-path", path])
        && std::path::Path::new(&p).exists()
    {
        println!("cargo:rerun-if-changed={p}");
    }
}

/// The glibc this build script runs with: on a native build, the one the binary is linked
/// against.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn host_glibc() -> Option<String> {
    unsafe extern "C" {
        fn gnu_get_libc_version() -> *const std::ffi::c_char;
    }
    // SAFETY: glibc returns a static, NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    let v = v.to_str().ok()?;
    // "2.36"; some distributions append more ("2.35.0"): keep major.minor.
    let mut parts = v.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    Some(format!("{major}.{minor}"))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn host_glibc() -> Option<String> {
    None
}
