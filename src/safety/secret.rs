//! Secrets never leave dbio: a password given in a connection string (a
//! `postgresql://user:PASSWORD@host/db` URL, a `password=...` key, `?password=...` in a
//! URL's query) is shown as `****` wherever the text goes — a job file, result.json, the
//! summary and report, the results store, a child's command line, an error message, a
//! process list. Settings read from a server that hold secrets or run programs
//! (`*password*`, `*passphrase*`, `primary_conninfo`, `*_command`, key files) are shown the
//! same way. [`redact`] and [`redact_setting`] are the only places that decide it.

use std::borrow::Cow;

/// What a secret is shown as.
pub const MASK: &str = "****";

/// `text` with every password in it shown as [`MASK`]: the password of a `postgres://`,
/// `postgresql://`, `mysql://` or `mariadb://` URL's user, and the value of every `...password=` key (key=value strings,
/// URL query parameters, `PGPASSWORD=` in a command line; quoted values included). Text
/// without one is returned as it is.
pub fn redact(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    if !lower.contains("password") && !lower.contains("://") {
        return Cow::Borrowed(text);
    }
    // Byte ranges to mask, in order.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    url_passwords(text, &lower, &mut spans);
    key_passwords(text, &lower, &mut spans);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The password of each `postgres[ql]://user:password@host` in `text`.
fn url_passwords(text: &str, lower: &str, spans: &mut Vec<(usize, usize)>) {
    let mut from = 0;
    while let Some(i) = lower[from..].find("://") {
        let scheme_end = from + i;
        from = scheme_end + 3;
        let scheme_start = lower[..scheme_end]
            .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '+' && c != '-' && c != '.')
            .map_or(0, |p| p + 1);
        if !matches!(
            &lower[scheme_start..scheme_end],
            "postgres" | "postgresql" | "mysql" | "mariadb"
        ) {
            continue;
        }
        // The authority: up to the path, query, fragment or the end of the word.
        let rest = &text[from..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '\'')
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        if let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            spans.push((from + colon + 1, from + at));
        }
    }
}

/// The value of each `...password=` key in `text` (`password=x`, `password = 'a b'`,
/// `?password=x&`, `PGPASSWORD=x`).
fn key_passwords(text: &str, lower: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = lower[from..].find("password") {
        let mut p = from + i + "password".len();
        from = p;
        while p < bytes.len() && bytes[p] == b' ' {
            p += 1;
        }
        if p >= bytes.len() || bytes[p] != b'=' {
            continue;
        }
        p += 1;
        while p < bytes.len() && bytes[p] == b' ' {
            p += 1;
        }
        let start = p;
        let end = if p < bytes.len() && bytes[p] == b'\'' {
            // A quoted value: up to the closing quote (backslash escapes one character).
            let mut q = p + 1;
            while q < bytes.len() && bytes[q] != b'\'' {
                q += if bytes[q] == b'\\' { 2 } else { 1 };
            }
            (q + 1).min(bytes.len())
        } else {
            let mut q = p;
            while q < bytes.len()
                && !bytes[q].is_ascii_whitespace()
                && !b"&#'\"".contains(&bytes[q])
            {
                q += if bytes[q] == b'\\' { 2 } else { 1 };
            }
            q.min(bytes.len())
        };
        if end > start {
            spans.push((start, end));
            from = end;
        }
    }
}

/// Whether a server setting of this name holds a secret or runs a program: its value is
/// never shown.
pub fn is_secret_setting(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("password")
        || n.contains("passphrase")
        || n.ends_with("_command")
        || n == "ssl_key_file"
        || n == "krb_server_keyfile"
}

/// A setting read from a server as it may be shown: `****` for a secret one
/// ([`is_secret_setting`]), a connection string (`primary_conninfo`, ...) with its password
/// masked, anything else as it is.
pub fn redact_setting(name: &str, value: &str) -> String {
    if value.is_empty() {
        return String::new();
    }
    if is_secret_setting(name) {
        return MASK.to_string();
    }
    redact(value).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_masked() {
        assert_eq!(
            redact("postgresql://u:s3cret@h:5432/db"),
            "postgresql://u:****@h:5432/db"
        );
        assert_eq!(redact("postgres://u:p%40ss@h/db"), "postgres://u:****@h/db");
        assert_eq!(redact("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(
            redact("postgresql:///db?host=/s&password=x1&user=u"),
            "postgresql:///db?host=/s&password=****&user=u"
        );
        assert_eq!(redact("https://a:b@c/"), "https://a:b@c/");
        assert_eq!(
            redact("mysql://root:hunter2@localhost/mysql"),
            "mysql://root:****@localhost/mysql"
        );
        assert_eq!(redact("mariadb://u:x@h/d"), "mariadb://u:****@h/d");
        assert_eq!(
            redact("dbio pg run --pg postgresql://me:pw@[::1]:5/x --json"),
            "dbio pg run --pg postgresql://me:****@[::1]:5/x --json"
        );
    }

    #[test]
    fn key_value_passwords_are_masked() {
        assert_eq!(
            redact("host=/tmp password=abc user=me"),
            "host=/tmp password=**** user=me"
        );
        assert_eq!(
            redact("host=h password = 'a b\\' c' port=1"),
            "host=h password = **** port=1"
        );
        assert_eq!(redact("PGPASSWORD=zz dbio"), "PGPASSWORD=**** dbio");
        assert_eq!(redact("sslpassword=k"), "sslpassword=****");
        assert_eq!(redact("the password is wrong"), "the password is wrong");
        assert_eq!(redact("password="), "password=");
    }

    #[test]
    fn secret_settings_are_masked() {
        assert_eq!(redact_setting("archive_command", "cp %p /x"), MASK);
        assert_eq!(redact_setting("ssl_passphrase_command", "echo x"), MASK);
        assert_eq!(
            redact_setting("primary_conninfo", "host=p user=r password=k"),
            "host=p user=r password=****"
        );
        assert_eq!(redact_setting("shared_buffers", "128MB"), "128MB");
        assert_eq!(redact_setting("archive_command", ""), "");
    }
}
