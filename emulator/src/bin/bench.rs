//! Load check (filled in later).
fn main() {}
