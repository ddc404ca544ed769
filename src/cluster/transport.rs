//! How the coordinator reaches a host: a command whose stdin and stdout are the agent's.
//! Only OpenSSH is built ([`Ssh`]); a `kubectl exec -i POD --` transport would be a second
//! implementation of [`Transport`] with the same pipe (see README, "Many hosts").
//! dbio itself opens no socket and listens on nothing: ssh does the connecting.

use std::io::{Read, Write};
use std::process::{Child, Stdio};

use crate::safety::exec::Program;

/// Starts commands on a host with stdin, stdout and stderr piped.
pub trait Transport: Send + Sync {
    /// `remote` (words, quoted here for the remote shell) started on `host`.
    fn spawn(&self, host: &str, remote: &[&str]) -> std::io::Result<Child>;

    /// Runs a shell `script` on `host` with `input` on its stdin; its stdout on success,
    /// else its last stderr line.
    fn script(&self, host: &str, script: &str, input: &[u8]) -> Result<String, String> {
        let mut child = self
            .spawn(host, &["sh", "-c", script])
            .map_err(|e| e.to_string())?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = input.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let mut out = String::new();
        let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
        let mut err = String::new();
        let _ = child.stderr.take().expect("piped").read_to_string(&mut err);
        let _ = feeder.join();
        let status = child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(out)
        } else {
            Err(last_line(&err).unwrap_or_else(|| format!("it exited with {status}")))
        }
    }
}

/// The last non-empty line of `text`.
pub fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// `--ssh "CMD"`: the command split into words as a shell would, then dbio's own options
/// (`-o BatchMode=yes`: never a password prompt; `-o ConnectTimeout=10` unless the user
/// gave one), the destination exactly as typed, `--`, and the remote command.
#[derive(Debug, Clone)]
pub struct Ssh {
    words: Vec<String>,
    /// The first word, found and checked (a program no other user could have written).
    program: Program,
    /// Print each command line on stderr before it starts (it came from a job file).
    announce: bool,
}

impl Ssh {
    pub fn new(cmd: &str) -> Result<Ssh, String> {
        let words = match shlex::split(cmd) {
            Some(words) if !words.is_empty() => words,
            _ => {
                return Err(format!(
                    "--ssh '{cmd}': a command, e.g. \"ssh\" or \"ssh -F FILE\" (quotes balanced)"
                ));
            }
        };
        let program = Program::resolve(&words[0])
            .map_err(|e| format!("--ssh '{cmd}': {e}"))?
            .ok_or_else(|| {
                format!(
                    "--ssh '{cmd}': no program {} (looked for in {} and PATH)",
                    crate::units::shown(&words[0]),
                    crate::safety::exec::SYSTEM_DIRS.join(", ")
                )
            })?;
        Ok(Ssh {
            words,
            program,
            announce: false,
        })
    }

    /// The same, printing each command line on stderr before it starts.
    pub fn announced(self) -> Ssh {
        Ssh {
            announce: true,
            ..self
        }
    }

    /// The whole command line for `remote` on `host`.
    pub fn argv(&self, host: &str, remote: &[&str]) -> Vec<String> {
        let mut v = self.words.clone();
        v.extend(["-o".to_string(), "BatchMode=yes".to_string()]);
        if !self
            .words
            .iter()
            .any(|w| w.to_ascii_lowercase().contains("connecttimeout"))
        {
            v.extend(["-o".to_string(), "ConnectTimeout=10".to_string()]);
        }
        v.push(host.to_string());
        v.push("--".to_string());
        v.push(remote_command(remote));
        v
    }
}

/// Words as one command line for the remote shell, each quoted.
pub fn remote_command(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| {
            shlex::try_quote(w)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| "''".into())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Transport for Ssh {
    fn spawn(&self, host: &str, remote: &[&str]) -> std::io::Result<Child> {
        let argv = self.argv(host, remote);
        if self.announce {
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            stderr_line!(
                "dbio: running {}",
                crate::units::shown(&remote_command(&words))
            );
        }
        self.program
            .command()
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dbio_adds_batch_mode_and_a_timeout_and_quotes_the_remote_command() {
        let s = Ssh::new("ssh -F '/tmp/my conf'").unwrap();
        let v = s.argv("user@db1", &["/opt/dbio x/dbio", "agent"]);
        assert_eq!(
            v,
            [
                "ssh",
                "-F",
                "/tmp/my conf",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=10",
                "user@db1",
                "--",
                "'/opt/dbio x/dbio' agent"
            ]
        );
        let s = Ssh::new("ssh -o ConnectTimeout=3").unwrap();
        let v = s.argv("h", &["dbio"]);
        assert_eq!(v.iter().filter(|w| w.contains("ConnectTimeout")).count(), 1);
        assert!(Ssh::new("ssh 'unbalanced").is_err());
        assert!(Ssh::new("  ").is_err());
    }
}
