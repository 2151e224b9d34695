//! Errors that stop the gate before a verdict: exit code 2.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, SourceCode};

use crate::source::{Source, Span};

/// Something stopped the gate before a verdict (exit 2): bad usage, a missing,
/// unreadable or malformed input, a config or script error, a failed write. Names the
/// file; points into it when the place is known.
#[derive(Debug)]
pub struct GateError {
    pub file: String,
    pub message: String,
    kind: Kind,
    detail: Box<Detail>,
}

/// What kind of stop it is: callers branch on this, never on the message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The command line or config asks for something impossible.
    Usage,
    /// A file the gate needs is not there.
    Missing,
    /// An input that is there could not be read or does not parse.
    Input,
    /// A policy script failed to load or run.
    Script,
    /// A file the gate writes (ledger, baseline, report, record) could not be written.
    Write,
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

impl GateError {
    /// An input that could not be read or does not parse.
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self::of(Kind::Input, file, message)
    }

    pub fn of(kind: Kind, file: impl Into<String>, message: impl Into<String>) -> Self {
        GateError {
            file: file.into(),
            message: message.into(),
            kind,
            detail: Box::default(),
        }
    }

    /// An error without a file (bad command-line usage).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::of(Kind::Usage, "", message)
    }

    /// A file that is not there.
    pub fn missing(file: impl Into<String>) -> Self {
        Self::of(Kind::Missing, file, "not found")
    }

    /// A policy script that failed to load or run.
    pub fn script(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self::of(Kind::Script, file, message)
    }

    /// A file the gate writes that could not be written.
    pub fn write(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self::of(Kind::Write, file, message)
    }

    pub fn io(file: &str, err: std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound => Self::missing(file),
            _ => Self::new(file, format!("could not be read: {err}")),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
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

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file[..], self.detail.location) {
            ("", _) => write!(f, "{}", self.message),
            (file, Some((line, column))) => write!(f, "{file}:{line}:{column}: {}", self.message),
            (file, None) => write!(f, "{file}: {}", self.message),
        }
    }
}

impl std::error::Error for GateError {}

impl Diagnostic for GateError {
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

pub type Result<T, E = GateError> = std::result::Result<T, E>;
