//! JS bindings.
