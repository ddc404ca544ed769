//! The wizard's questions, drawn by the prompt crate (inquire) on the terminal: each has a
//! default (Enter takes it) and a one-line reason under it. Ctrl-C or Esc at a question, or
//! a signal between two, stops the wizard with [`Error::Interrupted`] — before anything is
//! created, since nothing is until every question is answered.

use std::sync::atomic::{AtomicBool, Ordering};

use inquire::validator::Validation;

use crate::error::{Error, Result};

/// Asks questions; stops when the user does.
pub struct Ask<'a> {
    pub stop: &'a AtomicBool,
}

/// What a stopped wizard says (as `error: ...`, exit 130).
pub const STOPPED: &str = "the wizard was stopped at a question; nothing was created";

impl Ask<'_> {
    /// One of `options` (the `default`th is where the cursor starts); its index.
    pub fn choose(
        &self,
        question: &str,
        reason: &str,
        options: &[String],
        default: usize,
    ) -> Result<usize> {
        self.check()?;
        let picked = inquire::Select::new(question, options.to_vec())
            .with_help_message(reason)
            .with_starting_cursor(default)
            .with_page_size(options.len())
            .without_filtering()
            .raw_prompt()
            .map_err(stopped)?;
        self.check()?;
        Ok(picked.index)
    }

    /// Several of `options` (`default` are ticked to begin with); their indexes.
    pub fn choose_many(
        &self,
        question: &str,
        reason: &str,
        options: &[String],
        default: &[usize],
    ) -> Result<Vec<usize>> {
        self.check()?;
        let picked = inquire::MultiSelect::new(question, options.to_vec())
            .with_help_message(reason)
            .with_default(default)
            .with_page_size(options.len())
            .without_filtering()
            .with_validator(|chosen: &[inquire::list_option::ListOption<&String>]| {
                Ok(if chosen.is_empty() {
                    Validation::Invalid("tick at least one (space), then Enter".into())
                } else {
                    Validation::Valid
                })
            })
            .raw_prompt()
            .map_err(stopped)?;
        self.check()?;
        Ok(picked.into_iter().map(|o| o.index).collect())
    }

    /// A line of text, checked by `valid` (its error is shown under the question, which is
    /// asked again); `default` when the user just presses Enter.
    pub fn text(
        &self,
        question: &str,
        reason: &str,
        default: &str,
        valid: impl Fn(&str) -> std::result::Result<(), String> + Clone + 'static,
    ) -> Result<String> {
        self.check()?;
        let answer = inquire::Text::new(question)
            .with_help_message(reason)
            .with_default(default)
            .with_validator(move |text: &str| {
                Ok(match valid(text.trim()) {
                    Ok(()) => Validation::Valid,
                    Err(why) => Validation::Invalid(why.into()),
                })
            })
            .prompt()
            .map_err(stopped)?;
        self.check()?;
        Ok(answer.trim().to_string())
    }

    /// Yes or no.
    pub fn confirm(&self, question: &str, reason: &str, default: bool) -> Result<bool> {
        self.check()?;
        let yes = inquire::Confirm::new(question)
            .with_help_message(reason)
            .with_default(default)
            .prompt()
            .map_err(stopped)?;
        self.check()?;
        Ok(yes)
    }

    /// A signal that came between two questions (the terminal is not in raw mode then, so
    /// Ctrl-C is a SIGINT, which sets the stop flag) stops the wizard too: checked before
    /// and after each question.
    pub fn check(&self) -> Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted(STOPPED.into()));
        }
        Ok(())
    }
}

/// The prompt's error: Ctrl-C and Esc stop the wizard.
fn stopped(e: inquire::InquireError) -> Error {
    use inquire::InquireError as E;
    match e {
        E::OperationInterrupted | E::OperationCanceled => Error::Interrupted(STOPPED.into()),
        E::NotTTY => Error::usage(super::NO_TERMINAL),
        other => Error::other(format!("the wizard cannot ask on this terminal: {other}")),
    }
}
