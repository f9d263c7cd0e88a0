//! Why a backend could not do what the protocol asked.

use thiserror::Error;

/// A backend failure (device errors, resources).
#[derive(Debug, Error)]
#[error("{backend} backend: {message}")]
pub struct BackendError {
    /// The backend's name.
    pub backend: &'static str,
    /// What went wrong.
    pub message: String,
}
