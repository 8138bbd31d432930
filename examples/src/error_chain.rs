//! An error and its causes on one line, as anyhow's `{:#}` prints them:
//! the library errors either show a cause in their message or return it
//! as `source()`, so the whole chain is printed, once.

/// `e`, then each of its sources, joined by `: `. A source whose text the
/// line already holds is not repeated.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("layout cache /x: cannot write")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_source_outside_the_message_is_printed_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(error_chain(&e), "layout cache /x: cannot write: disk full");
    }

    #[test]
    fn a_cause_in_the_message_is_not_repeated() {
        let e = mpidd_read::CoreFile::open(std::path::Path::new("/nonexistent/mpidd-core"))
            .unwrap_err();
        let line = error_chain(&e);
        assert_eq!(
            line.matches("No such file or directory").count(),
            1,
            "{line}"
        );
    }
}
