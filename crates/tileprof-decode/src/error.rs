//! What can go wrong while decoding. The Python layer words each error the way tileprof
//! always has (file, sample index or line, field); these carry what it needs for that.

use std::fmt;

/// A decoding failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A JSON document that does not decode: `sample` is the index of the first sample that
    /// does not, when the failure is inside the samples array.
    Json {
        sample: Option<usize>,
        message: String,
    },
    /// An NDJSON line that does not decode: its number (from 1) and its text.
    Line {
        line: u64,
        text: Vec<u8>,
        message: String,
    },
    /// The gzip stream is corrupt or truncated.
    Gzip(String),
    /// Reading the file failed.
    Io(String),
    /// Memory for what the input holds could not be had (a `try_reserve` failed): the columns
    /// grow fallibly, so running out is this error, not an abort. It says what was being
    /// grown in a static text: the error itself allocates nothing where nothing is left.
    Memory(&'static str),
}

impl DecodeError {
    pub fn json(sample: Option<usize>, message: impl Into<String>) -> Self {
        DecodeError::Json {
            sample,
            message: message.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Json {
                sample: Some(index),
                message,
            } => write!(f, "sample {index}: {message}"),
            DecodeError::Json {
                sample: None,
                message,
            } => write!(f, "{message}"),
            DecodeError::Line { line, message, .. } => write!(f, "line {line}: {message}"),
            DecodeError::Gzip(message) => write!(f, "corrupt or truncated gzip data ({message})"),
            DecodeError::Io(message) => write!(f, "cannot read: {message}"),
            DecodeError::Memory(what) => write!(f, "out of memory ({what})"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<std::collections::TryReserveError> for DecodeError {
    fn from(_: std::collections::TryReserveError) -> Self {
        DecodeError::Memory("a column or dictionary could not grow")
    }
}

impl From<hashbrown::TryReserveError> for DecodeError {
    fn from(_: hashbrown::TryReserveError) -> Self {
        DecodeError::Memory("a dictionary could not grow")
    }
}

/// serde_json's message without its " at line L column C" (the caller says where).
pub fn serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_says_where_and_what() {
        let said = [
            (
                DecodeError::json(Some(3), "missing field"),
                "sample 3: missing field",
            ),
            (DecodeError::json(None, "not an object"), "not an object"),
            (
                DecodeError::Line {
                    line: 7,
                    text: b"{".to_vec(),
                    message: "EOF".into(),
                },
                "line 7: EOF",
            ),
            (
                DecodeError::Gzip("bad header".into()),
                "corrupt or truncated gzip data (bad header)",
            ),
            (DecodeError::Io("gone".into()), "cannot read: gone"),
            (DecodeError::Memory("rows"), "out of memory (rows)"),
        ];
        for (error, text) in said {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn serde_messages_lose_only_their_place() {
        let error = serde_json::from_str::<i64>("  x").unwrap_err();
        assert_eq!(error.to_string(), "expected value at line 1 column 3");
        assert_eq!(serde_message(&error), "expected value");
        let io = serde_json::Error::io(std::io::Error::other("no place"));
        assert_eq!(serde_message(&io), "no place");
    }
}
