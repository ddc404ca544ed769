//! What a throwaway database server's `--<db>-set NAME=VALUE` may set, checked the same
//! way for every database: a plain name, not [`AllowList::denied`], on
//! [`AllowList::allowed`], and a value with no control character of at most
//! [`AllowList::max_value`] bytes. Each database's list and words are its own
//! ([`super::pg_set`], [`super::mysql_set`]).

/// One database's allow-list and how its refusals read.
pub struct AllowList {
    /// The longest name taken.
    pub max_name: usize,
    /// Whether a name may start with '_' (else only with a letter).
    pub underscore_first: bool,
    /// What a name is, after "'NAME' is not a setting's name ": what it may hold and an
    /// example.
    pub what_a_name_is: &'static str,
    /// The settings taken.
    pub allowed: &'static [&'static str],
    /// Why a setting is never set, whatever `allowed` says (`name` lower case).
    pub denied: fn(&str) -> Option<&'static str>,
    /// What the list is, after "NAME is not one of the ".
    pub what_the_list_is: &'static str,
    /// Whether an empty value is refused.
    pub value_needed: bool,
    /// The longest value taken.
    pub max_value: usize,
}

impl AllowList {
    /// Whether `NAME=VALUE` may be given to a throwaway server; why not, naming the
    /// setting, else. `name` any case.
    pub fn check(&self, name: &str, value: &str) -> Result<(), String> {
        let plain = !name.is_empty()
            && name.len() <= self.max_name
            && name.starts_with(|c: char| {
                c.is_ascii_alphabetic() || (self.underscore_first && c == '_')
            })
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !plain {
            return Err(format!(
                "'{}' is not a setting's name {}",
                crate::units::echoed(name),
                self.what_a_name_is
            ));
        }
        let lower = name.to_ascii_lowercase();
        if let Some(why) = (self.denied)(&lower) {
            return Err(format!("{lower} {why}; dbio never sets it"));
        }
        if !self.allowed.contains(&lower.as_str()) {
            return Err(format!(
                "{lower} is not one of the {}",
                self.what_the_list_is
            ));
        }
        if self.value_needed && value.is_empty() {
            return Err(format!("{lower}: a value is needed"));
        }
        if value.chars().any(char::is_control) {
            return Err(format!(
                "the value of {lower} holds a control character (a newline, a tab, ...)"
            ));
        }
        if value.len() > self.max_value {
            return Err(format!(
                "the value of {lower} is {} bytes long; at most {}",
                value.len(),
                self.max_value
            ));
        }
        Ok(())
    }
}
