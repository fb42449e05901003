//! The error that stops reading a capture: where (byte offset in the decompressed stream) and why.

use std::fmt;

/// A capture (or part of it) cannot be read. The Python side turns it into
/// `tcpsack_analyze.errors.CaptureError` with the file's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureError {
    /// Byte offset in the (decompressed) capture stream where reading failed; None when the
    /// file could not be opened at all.
    pub offset: Option<u64>,
    /// One line for the user.
    pub message: String,
}

impl CaptureError {
    pub fn new(offset: Option<u64>, message: String) -> CaptureError {
        CaptureError { offset, message }
    }

    pub fn at(offset: u64, message: impl Into<String>) -> CaptureError {
        CaptureError { offset: Some(offset), message: message.into() }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "at byte {o}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}
