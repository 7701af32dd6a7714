//! Why a run stopped early, typed: a cancel, what the server failed (with its SQLSTATE), a
//! statement past its timeout, or a sentence of pglab's own.

/// Why a run stopped early. The sentence is the `Display`; what the server said keeps its
/// SQLSTATE, so code that must tell one failure from another asks [`RunError::sqlstate`]
/// instead of searching the sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("cancelled")]
    Cancelled,
    /// A statement the server failed: its SQLSTATE and the sentence that says it.
    #[error("{sentence}")]
    Server { sqlstate: String, sentence: String },
    /// A statement ran past the run's `statement_timeout` (`limit` as set, or "server
    /// setting").
    #[error("a statement ran past statement_timeout ({limit}): raise it or use fewer rows")]
    Timeout { limit: String },
    /// Anything else, as a sentence (a lost thread, a refusal pglab itself makes).
    #[error("{0}")]
    Failed(String),
}

impl RunError {
    pub(crate) fn failed(s: impl Into<String>) -> RunError {
        RunError::Failed(s.into())
    }

    /// The server's SQLSTATE, when the server failed the statement.
    pub(crate) fn sqlstate(&self) -> Option<&str> {
        match self {
            RunError::Server { sqlstate, .. } => Some(sqlstate),
            _ => None,
        }
    }

    /// The same failure said within `what` ("index 1: …"): its kind and SQLSTATE kept, a
    /// cancel left a cancel.
    pub(crate) fn within(self, what: impl std::fmt::Display) -> RunError {
        match self {
            RunError::Cancelled => RunError::Cancelled,
            RunError::Server { sqlstate, sentence } => RunError::Server {
                sqlstate,
                sentence: format!("{what}: {sentence}"),
            },
            other => RunError::Failed(format!("{what}: {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_failure_said_within_a_step_keeps_its_sqlstate() {
        let e = RunError::Server {
            sqlstate: "42P07".into(),
            sentence: "relation \"t\" already exists".into(),
        }
        .within("index 1");
        assert_eq!(e.sqlstate(), Some("42P07"));
        assert_eq!(e.to_string(), "index 1: relation \"t\" already exists");
    }

    #[test]
    fn a_cancel_stays_a_cancel_and_a_timeout_keeps_its_sentence() {
        assert_eq!(RunError::Cancelled.within("index 1"), RunError::Cancelled);
        let t = RunError::Timeout {
            limit: "5 s".into(),
        }
        .within("index 1");
        assert_eq!(
            t.to_string(),
            "index 1: a statement ran past statement_timeout (5 s): raise it or use fewer rows"
        );
        assert_eq!(t.sqlstate(), None);
    }
}
