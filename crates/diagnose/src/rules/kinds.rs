//! The built-in rules' kinds ([`Kind`] and its lists), made by the registry
//! ([`builtin_rules!`](crate::builtin_rules)) in a file of their own: the report names them, and
//! nothing here leads back to the report.

crate::builtin_rules! {}
