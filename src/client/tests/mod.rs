//! Cross-module behaviour tests of the client core.
