//! Integration tests across the workspace's crates live in `tests/tests/`.
//! This library is empty; it only gives them a package to belong to.
