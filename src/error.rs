//! Errors that stop the gate before a verdict: exit code 2.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, SourceCode};

use crate::source::{Source, Span};

/// Something could not be evaluated: usage, unreadable or malformed input, config or
/// script error. Always names the file; points into it when the place is known.
#[derive(Debug)]
pub struct InputError {
    pub file: String,
    pub message: String,
    detail: Box<Detail>,
}

#[derive(Debug, Default)]
struct Detail {
    help: Option<String>,
    source: Option<Source>,
    location: Option<(usize, usize)>,
    labels: Vec<(Span, String)>,
}

/// A serde_json error's message without its own ` at line L column C`: the place goes
/// into the error's label, in the file's own terms.
pub fn json_message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    }
}

impl InputError {
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            message: message.into(),
            detail: Box::default(),
        }
    }

    /// An error without a file (bad command-line usage).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new("", message)
    }

    pub fn io(file: &str, err: std::io::Error) -> Self {
        let message = match err.kind() {
            std::io::ErrorKind::NotFound => "not found".to_string(),
            _ => format!("could not be read: {err}"),
        };
        Self::new(file, message)
    }

    /// Points the error at a byte range of the source file.
    pub fn at(mut self, source: &Source, span: Span, label: impl Into<String>) -> Self {
        if self.detail.location.is_none() {
            self.detail.location = Some(source.line_col(span.start));
        }
        if !source.snippet_fits_span(&span) {
            return self;
        }
        if self.detail.source.is_none() {
            self.detail.source = Some(source.clone());
        }
        self.detail.labels.push((span, label.into()));
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.detail.help = Some(help.into());
        self
    }

    /// 1-based line and column of the first label, when known.
    pub fn location(&self) -> Option<(usize, usize)> {
        self.detail.location
    }

    pub fn help_text(&self) -> Option<&str> {
        self.detail.help.as_deref()
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file[..], self.detail.location) {
            ("", _) => write!(f, "{}", self.message),
            (file, Some((line, column))) => write!(f, "{file}:{line}:{column}: {}", self.message),
            (file, None) => write!(f, "{file}: {}", self.message),
        }
    }
}

impl std::error::Error for InputError {}

impl Diagnostic for InputError {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.detail
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.detail.source.as_deref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.detail.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.detail.labels.iter().map(|(span, label)| {
            LabeledSpan::new_with_span(Some(label.clone()), span.clone())
        })))
    }
}

pub type Result<T, E = InputError> = std::result::Result<T, E>;
